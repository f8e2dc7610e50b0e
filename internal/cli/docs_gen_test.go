package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// WriteDocs writes docs/cli.md: every command of the tree with its usage,
// description, examples and flags, in the order help lists them.
func WriteDocs(w io.Writer) {
	root := newRoot(&globals{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	fmt.Fprintln(w, "# zeroclaw command line")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated from the command tree (`ZEROCLAW_UPDATE_DOCS=1 go test ./internal/cli -run TestCLIDocs`);")
	fmt.Fprintln(w, "`zeroclaw help COMMAND` prints the same. Every command takes `--config-dir DIR`")
	fmt.Fprintln(w, "(default `$ZEROCLAW_CONFIG_DIR`, else `~/.zeroclaw`). Flags may come before or after")
	fmt.Fprintln(w, "the arguments; `--` ends them. Exit codes: 0 success, 1 failure, 2 a usage mistake")
	fmt.Fprintln(w, "(with a hint on stderr); `zeroclaw prompt` adds its own (see there).")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || strings.HasPrefix(c.Name(), "__") {
			return
		}
		fmt.Fprintf(w, "\n## %s\n\n", c.CommandPath())
		desc := c.Long
		if desc == "" {
			desc = strings.ToUpper(c.Short[:1]) + c.Short[1:] + "."
		}
		fmt.Fprintln(w, desc)
		fmt.Fprintf(w, "\n```\n%s\n```\n", c.UseLine())
		if c.Example != "" {
			fmt.Fprintf(w, "\nExamples:\n\n```\n%s\n```\n", c.Example)
		}
		if f := c.NonInheritedFlags(); f.HasAvailableFlags() {
			fmt.Fprintf(w, "\nFlags:\n\n```\n%s```\n", f.FlagUsages())
		}
		var subs []string
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() && s.Name() != "help" {
				subs = append(subs, fmt.Sprintf("`%s`", s.Name()))
			}
		}
		if len(subs) > 0 {
			fmt.Fprintf(w, "\nSubcommands: %s.\n", strings.Join(subs, ", "))
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}
