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
		{"[providers.l]\nkind = \"openai\"\nbase_url = \"localhost:11434/v1\"\n", `providers.l.base_url = "localhost:11434/v1": want http(s)://`},
		{"[providers.a]\nkind = \"echo\"\n[providers.b]\nkind = \"echo\"\n", `2 providers and no [agents.default]`},
		{"[mcp.servers.x]\nargs = [\"a\"]\n", `mcp.servers.x: set command`},
		{"[mcp.servers.x]\ncommand = \"srv\"\noauth_client_id = \"c\"\n", `mcp.servers.x: oauth_client_id and oauth_client_secret are for a url server`},
		{"[mcp.servers.x]\nurl = \"https://h/mcp\"\noauth_client_secret = \"s\"\n", `mcp.servers.x: oauth_client_secret needs oauth_client_id`},
		{"[providers.e]\nkind = \"echo\"\ncontext_window = 10\n", `providers.e.context_window = 10`},
		{"[providers.e]\nkind = \"echo\"\nreasoning = \"max\"\n", `providers.e.reasoning = "max": must be one of off, low, medium, high`},
		{"[providers.e]\nkind = \"echo\"\nmax_tokens = -1\n", `providers.e.max_tokens = -1: must be at least 1`},
		{"[providers.e]\nkind = \"echo\"\n[agents.default]\nprovider = \"e\"\nreasoning = \"hard\"\n", `agents.default.reasoning = "hard"`},
		{"[providers.e]\nkind = \"echo\"\n[providers.e.pricing]\ninput = 3\ncache_read = -0.3\n", `providers.e.pricing.cache_read = -0.3: must be a price in USD per million tokens`},
		{"[providers.e]\nkind = \"echo\"\n[providers.e.pricing]\noutput = nan\n", `providers.e.pricing.output = NaN`},
		{"[budget]\nmax_cost_usd_per_day = -5\n", `budget.max_cost_usd_per_day = -5: must be an amount in USD, 0 or more (0: no limit)`},
		{"[goals]\ndefault_turns = 0\n", `goals.default_turns = 0: want 1 to 100000`},
		{"[goals]\ndefault_minutes = -1\n", `goals.default_minutes = -1: want 1 to 525600`},
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

// A file with one provider and no agents runs on it (not on the
// environment's); a key variable that is not set is a warning.
func TestOneProviderIsTheDefaultAgentsAndUnsetKeysWarn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\napi_key_env = \"LOCAL_KEY\"\n"), 0o600)
	c, err := Load(p, env(map[string]string{"OPENAI_API_KEY": "sk-env"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agents["default"].Provider != "local" {
		t.Fatalf("default agent on %q, want the file's provider", c.Agents["default"].Provider)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `api_key_env = "LOCAL_KEY": the variable is not set`) {
		t.Fatalf("warnings %v", c.Warnings)
	}
	c, _ = Load(p, env(map[string]string{"LOCAL_KEY": "k"}))
	if len(c.Warnings) != 0 {
		t.Fatalf("warnings with the key set: %v", c.Warnings)
	}
}
