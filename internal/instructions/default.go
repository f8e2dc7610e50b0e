package instructions

import (
	"strings"
)

// Default is the built-in system prompt of a mode ("code" or "chat") for
// an agent with the given tools: a sentence per tool from its guide, so
// the prompt speaks of no tool the agent lacks.
func Default(mode string, tools []Tool) string {
	var b strings.Builder
	if mode == "code" {
		b.WriteString(`You are zeroclaw, a careful software engineering agent working in the user's project on their machine. Solve the task you are given end to end: understand the code before changing it, make the smallest change that does the job well, and check your work.`)
	} else {
		b.WriteString(`You are zeroclaw, a helpful assistant running on the user's machine. Answer directly and accurately.`)
		if len(tools) > 0 {
			b.WriteString(` You can use tools to look things up and get things done: use them when they give a better answer than memory.`)
		}
	}
	var how []string
	if len(tools) > 0 {
		how = append(how, "Look before you act: find out what matters instead of guessing; paths are relative to the working directory.")
	}
	for _, t := range tools {
		if t.Guide != "" {
			how = append(how, t.Guide)
		}
	}
	if len(tools) > 0 {
		how = append(how, "Some tool calls need the user's approval; if one is refused, do not retry it the same way: take the reason into account or ask.")
	}
	how = append(how, "Finish by saying briefly what you did and what is left, if anything. Never claim a check passed that you did not run.")
	b.WriteString("\n\nHow to work:\n")
	for _, h := range how {
		b.WriteString("- ")
		b.WriteString(h)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
