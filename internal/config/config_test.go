package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveDirs(t *testing.T) {
	d, _ := ResolveDirs("/a", env(map[string]string{"ZEROCLAW_CONFIG_DIR": "/b"}))
	if d.ConfigDir != "/a" || d.DataDir != "/a/data" || d.Endpoint != "/a/data/daemon.sock" {
		t.Fatalf("flag: %+v", d)
	}
	d, _ = ResolveDirs("", env(map[string]string{"ZEROCLAW_CONFIG_DIR": "/b", "ZEROCLAW_DATA_DIR": "/d", "ZEROCLAW_SOCKET": "/s.sock"}))
	if d.ConfigDir != "/b" || d.DataDir != "/d" || d.Endpoint != "/s.sock" {
		t.Fatalf("env: %+v", d)
	}
	if p := DefaultEndpoint("windows", `/d`); !strings.HasPrefix(p, `\\.\pipe\zeroclaw-`) || len(p) != len(`\\.\pipe\zeroclaw-`)+16 {
		t.Fatalf("pipe %q", p)
	}
}

func TestDefaultProvider(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		kind string
	}{
		{nil, "echo"},
		{map[string]string{"OPENAI_API_KEY": "k"}, "openai"},
		{map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}, "anthropic"},
		{map[string]string{"OLLAMA_HOST": "127.0.0.1:11434"}, "openai"},
	} {
		c := Default(env(tt.env))
		if got := c.Providers[c.Agents["default"].Provider].Kind; got != tt.kind {
			t.Errorf("env %v: provider %s, want %s", tt.env, got, tt.kind)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"[daemon]\nmax_sessions = \n", ":2: "},
		{"[daemon]\nmax_sessions = 0\n", "daemon.max_sessions = 0: must be at least 1"},
		{"[providers.x]\nkind = \"gpt\"\n", `providers.x.kind = "gpt"`},
		{"[providers.p]\nkind = \"echo\"\n[agents.default]\nprovider = \"q\"\n", `agents.default.provider = "q": no [providers.q]`},
		{"[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"yolo\"\n", `agents.default.risk = "yolo"`},
	} {
		p := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(p, []byte(tt.text), 0o600)
		_, err := Load(p, env(nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: got %v, want mention of %q and the file", tt.text, err, tt.want)
		}
	}
	c, err := Load(filepath.Join(t.TempDir(), "missing.toml"), env(nil))
	if err != nil || c.Source != "" || c.Daemon.MaxSessions != 64 {
		t.Fatalf("missing file: %v %+v", err, c)
	}
}
