package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// A project's own agents: Markdown files whose front matter names and
// describes the agent and whose body is its instructions, in
// .zeroclaw/agents/ and, for what users already wrote for Claude Code,
// .claude/agents/ (the first wins on a name both have).

// AgentDirs are where a project's agent files are, in the order read.
var AgentDirs = []string{".zeroclaw/agents", ".claude/agents"}

// ProjectAgent is an agent a project defines in a file.
type ProjectAgent struct {
	Name  string
	Agent Agent // Description, Tools (ours), Model, SystemPrompt; no provider: the session's
	Path  string
}

// claudeTools maps Claude Code's tool names to ours.
var claudeTools = map[string]string{"Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "multi_edit",
	"Grep": "search", "Glob": "glob", "Bash": "shell", "WebFetch": "web_fetch", "LS": "list_dir", "TodoWrite": "plan"}

// inheritedModels are model names that mean the session's own (Claude
// Code's aliases, which no other provider knows).
var inheritedModels = map[string]bool{"": true, "inherit": true, "sonnet": true, "opus": true, "haiku": true}

// IsMCPPattern says whether name names MCP tools: mcp__SERVER__TOOL, or
// mcp__SERVER__* for all of a server's.
func IsMCPPattern(name string) bool {
	rest, ok := strings.CutPrefix(name, "mcp__")
	server, t, ok2 := strings.Cut(rest, "__")
	return ok && ok2 && server != "" && t != ""
}

// ProjectAgents reads the agent files of the project at dir. Problems
// are what a file gets wrong (it is left out, or the tool it names);
// config check shows them.
func ProjectAgents(dir string) (agents []ProjectAgent, problems []string) {
	seen := map[string]bool{}
	for _, sub := range AgentDirs {
		files, _ := filepath.Glob(filepath.Join(dir, sub, "*.md"))
		sort.Strings(files)
		for _, f := range files {
			a, probs := readAgentFile(f)
			problems = append(problems, probs...)
			if a == nil || seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			agents = append(agents, *a)
		}
	}
	return agents, problems
}

// readAgentFile reads one agent file.
func readAgentFile(path string) (*ProjectAgent, []string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", path, err)}
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return nil, []string{path + ": no front matter (--- name, description, tools, model ---)"}
	}
	front, body, ok := bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return nil, []string{path + ": the front matter does not end (---)"}
	}
	var fm struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Tools       any    `yaml:"tools"` // "Read, Grep" or a list
		Model       string `yaml:"model"`
	}
	if err := yaml.Unmarshal(front, &fm); err != nil {
		return nil, []string{fmt.Sprintf("%s: front matter: %v", path, err)}
	}
	name := fm.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".md")
	}
	if !validAgentName(name) {
		return nil, []string{fmt.Sprintf("%s: name %q: letters, digits, - and _ only", path, name)}
	}
	a := ProjectAgent{Name: name, Path: path, Agent: Agent{Description: strings.TrimSpace(fm.Description),
		SystemPrompt: strings.TrimSpace(strings.TrimPrefix(string(body), "\n"))}}
	if !inheritedModels[fm.Model] {
		a.Agent.Model = fm.Model
	}
	var problems []string
	var names []string
	switch t := fm.Tools.(type) {
	case string:
		names = strings.Split(t, ",")
	case []any:
		for _, x := range t {
			names = append(names, fmt.Sprint(x))
		}
	case nil:
	default:
		problems = append(problems, fmt.Sprintf("%s: tools: a list or a comma-separated string", path))
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if ours, ok := claudeTools[n]; ok {
			n = ours
		}
		if _, ok := tool.Lookup(n); !ok && !IsMCPPattern(n) {
			problems = append(problems, fmt.Sprintf("%s: tools: unknown tool %q (left out)", path, n))
			continue
		}
		a.Agent.Tools = append(a.Agent.Tools, n)
	}
	if fm.Tools == nil {
		a.Agent.Tools = nil // all the session's
	} else if a.Agent.Tools == nil {
		a.Agent.Tools = []string{} // none it names are known: none
	}
	return &a, problems
}

func validAgentName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
