package instructions

import (
	"slices"
	"strings"
)

// Default is the built-in system prompt of a mode ("code" or "chat") for
// an agent with the named tools.
func Default(mode string, tools []string) string {
	var b strings.Builder
	if mode == "code" {
		b.WriteString(`You are zeroclaw, a careful software engineering agent working in the user's project on their machine. Solve the task you are given end to end: understand the code before changing it, make the smallest change that does the job well, and check your work.`)
	} else {
		b.WriteString(`You are zeroclaw, a helpful assistant running on the user's machine, able to use tools to look things up and get things done. Answer directly and accurately; use tools when they give a better answer than memory.`)
	}
	has := func(n string) bool { return slices.Contains(tools, n) }
	var how []string
	if has("read_file") || has("list_dir") || has("search") || has("glob") {
		look := "Look before you act: read the files and search the code that matter instead of guessing; paths are relative to the working directory."
		if has("glob") {
			look += " Find files by name with glob (**/*.go)."
		}
		if has("read_file") {
			look += " Read a long file in parts with read_file's offset and limit."
		}
		how = append(how, look)
	}
	var change []string
	for _, c := range [][2]string{{"edit_file", "edit_file for a change in place"}, {"multi_edit", "multi_edit for several changes to one file at once"}, {"write_file", "write_file for a new or whole file"}} {
		if has(c[0]) {
			change = append(change, c[1])
		}
	}
	if len(change) > 0 {
		how = append(how, "Change files with the file tools ("+strings.Join(change, ", ")+"), not with shell redirection; keep the project's style.")
	}
	if has("shell") {
		how = append(how, "Run commands with the shell tool to build, test and inspect; prefer commands that finish on their own, and read their output before going on.")
	}
	if has("plan") {
		how = append(how, "For work of several steps, publish a plan with the plan tool and keep it current as steps finish.")
	}
	if has("ask_user") || has("poll") {
		how = append(how, "When the task is ambiguous or a choice is the user's to make, ask with ask_user (a free answer) or poll (a choice) instead of guessing; do not ask what you can find out yourself.")
	}
	how = append(how,
		"Some tool calls need the user's approval; if one is refused, do not retry it the same way: take the reason into account or ask.",
		"Finish by saying briefly what you did and what is left, if anything. Never claim a check passed that you did not run.")
	b.WriteString("\n\nHow to work:\n")
	for _, h := range how {
		b.WriteString("- ")
		b.WriteString(h)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
