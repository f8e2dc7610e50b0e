package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
)

func setupCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "setup", Short: "write config.toml: pick a local Ollama or a provider and its key's variable", Args: noArgs,
		Long: `zeroclaw setup is a short first run: it looks for a local Ollama (OLLAMA_HOST,
else http://127.0.0.1:11434) and offers its models, or asks for a provider
and the environment variable that holds its API key (the key itself is
never written), then writes config.toml and checks it.`}
	force := c.Flags().Bool("force", false, "replace an existing config.toml without asking")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		dirs, err := resolve(env, g.configDir)
		if err != nil {
			return err
		}
		s := &setup{env: env, in: bufio.NewReader(env.Stdin)}
		return s.run(ctx, dirs.ConfigFile(), *force)
	})
	return c
}

type setup struct {
	env console.Env
	in  *bufio.Reader
}

// ask prints question (with the default in brackets) and reads a line;
// an empty line or the end of input takes def.
func (s *setup) ask(question, def string) string {
	if def != "" {
		fmt.Fprintf(s.env.Stderr, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(s.env.Stderr, "%s: ", question)
	}
	line, _ := s.in.ReadString('\n') // the end of input is an empty answer
	line = strings.TrimSpace(line)
	if !console.IsTerminal(s.env.Stdin) {
		fmt.Fprintln(s.env.Stderr, line) // show the piped answer
	}
	if line == "" {
		return def
	}
	return line
}

func (s *setup) yes(question string, def bool) bool {
	d := "y/N"
	if def {
		d = "Y/n"
	}
	a := strings.ToLower(s.ask(question, d))
	switch a {
	case "y", "yes":
		return true
	case "n", "no":
		return false
	}
	return def
}

// choose offers numbered options and returns the index picked.
func (s *setup) choose(question string, options []string, def int) int {
	for i, o := range options {
		fmt.Fprintf(s.env.Stderr, "  %d) %s\n", i+1, o)
	}
	for {
		a := s.ask(question, strconv.Itoa(def+1))
		n, err := strconv.Atoi(a)
		if err == nil && n >= 1 && n <= len(options) {
			return n - 1
		}
		for i, o := range options {
			if strings.EqualFold(a, o) || strings.HasPrefix(strings.ToLower(o), strings.ToLower(a)+" ") {
				return i
			}
		}
		fmt.Fprintf(s.env.Stderr, "pick 1 to %d\n", len(options))
		if _, err := s.in.Peek(1); err != nil {
			return def // input ended
		}
	}
}

func (s *setup) run(ctx context.Context, path string, force bool) error {
	w := s.env.Stderr
	if _, err := os.Stat(path); err == nil && !force {
		if !s.yes(fmt.Sprintf("%s exists; replace it", path), false) {
			fmt.Fprintln(w, "left as it is (zeroclaw config check shows what it does)")
			return nil
		}
	}
	var body string
	if url, models := findOllama(ctx, s.env.Getenv); url != "" && len(models) > 0 {
		fmt.Fprintf(w, "found Ollama at %s with %d model(s)\n", url, len(models))
		if s.yes("use it", true) {
			m := models[s.choose("model", models, 0)]
			body = fmt.Sprintf("[providers.ollama]\nkind = \"openai\"\nbase_url = %q\nmodel = %q\n", url+"/v1", m)
		}
	}
	if body == "" {
		kinds := []string{"anthropic (Claude)", "openai (GPT)", "an OpenAI-compatible server (base URL)", "echo (offline, for trying zeroclaw out)"}
		switch s.choose("provider", kinds, 0) {
		case 0:
			body = s.keyed("anthropic", config.KindAnthropic, "", "ANTHROPIC_API_KEY", "claude-sonnet-4-5")
		case 1:
			body = s.keyed("openai", config.KindOpenAI, "", "OPENAI_API_KEY", "gpt-4o-mini")
		case 2:
			base := ""
			for {
				base = s.ask("base URL (such as http://127.0.0.1:8080/v1)", "")
				if strings.HasPrefix(base, "http://") || strings.HasPrefix(base, "https://") {
					break
				}
				fmt.Fprintln(w, "it must start with http:// or https://")
				if _, err := s.in.Peek(1); err != nil {
					return console.Exitf(1, "no base URL given; nothing written")
				}
			}
			body = s.keyed("local", config.KindOpenAI, base, "", "")
		default:
			body = "[providers.echo]\nkind = \"echo\"\n"
		}
	}
	text := "# written by zeroclaw setup; every key: docs/config.md\n\n" + body +
		"\n[agents.default]\nprovider = " + strconv.Quote(providerName(body)) + "\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(path, []byte(text), 0o600); err != nil {
		return err
	}
	cfg, err := config.Load(path, s.env.Getenv)
	if err != nil {
		return fmt.Errorf("wrote %s but it does not load (please report this): %w", path, err)
	}
	fmt.Fprintf(s.env.Stdout, "wrote %s\n", path)
	for _, warn := range cfg.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintln(s.env.Stdout, "next: zeroclaw config check (what is in force), zeroclaw chat; a running daemon: zeroclaw daemon reload")
	return nil
}

// keyed asks for the key's variable and the model, and returns the
// provider's table.
func (s *setup) keyed(name, kind, base, keyVar, model string) string {
	v := s.ask("environment variable that holds the API key (empty: none)", keyVar)
	if v != "" && s.env.Getenv(v) == "" {
		fmt.Fprintf(s.env.Stderr, "note: %s is not set here; set it where the daemon starts (export %s=...)\n", v, v)
	}
	m := s.ask("model", model)
	var b strings.Builder
	fmt.Fprintf(&b, "[providers.%s]\nkind = %q\n", name, kind)
	if base != "" {
		fmt.Fprintf(&b, "base_url = %q\n", base)
	}
	if v != "" {
		fmt.Fprintf(&b, "api_key_env = %q\n", v)
	}
	if m != "" {
		fmt.Fprintf(&b, "model = %q\n", m)
	}
	return b.String()
}

// providerName is the name of the one [providers.NAME] table in body.
func providerName(body string) string {
	line, _, _ := strings.Cut(body, "\n")
	return strings.TrimSuffix(strings.TrimPrefix(line, "[providers."), "]")
}

// findOllama asks OLLAMA_HOST (else the default address) for its models;
// "" when nothing answers within a second.
func findOllama(ctx context.Context, getenv func(string) string) (string, []string) {
	host := strings.TrimSuffix(getenv("OLLAMA_HOST"), "/")
	if host == "" {
		host = "http://127.0.0.1:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+"/api/tags", nil)
	if err != nil {
		return "", nil
	}
	// No proxy: this is a question to this machine.
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := hc.Do(req)
	if err != nil {
		return "", nil
	}
	defer resp.Body.Close()
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tags) != nil {
		return "", nil
	}
	var names []string
	for _, m := range tags.Models {
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return host, nil
	}
	return host, names
}
