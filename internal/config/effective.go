package config

import (
	"cmp"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// WriteEffective writes the configuration in force as TOML, each value
// followed by where it came from (Origin). Secrets never show: a key is
// named by its variable (api_key_env, with whether it is set), and MCP
// servers' env and header values and OAuth client secrets are hidden.
func (c *Config) WriteEffective(w io.Writer, getenv func(string) string) {
	src := c.Source
	if src == "" {
		src = "(no config file: built-in defaults)"
	}
	fmt.Fprintf(w, "# effective config from %s\n", src)
	c.writeTable(w, "daemon", reflect.ValueOf(c.Daemon), getenv)
	for _, name := range c.ProviderNames() {
		c.writeTable(w, "providers."+quoteKey(name), reflect.ValueOf(c.Providers[name]), getenv)
	}
	for _, alias := range c.AgentAliases() {
		c.writeTable(w, "agents."+quoteKey(alias), reflect.ValueOf(c.Agents[alias]), getenv)
	}
	c.writeTable(w, "gateway", reflect.ValueOf(c.Gateway), getenv)
	c.writeTable(w, "mcp", reflect.ValueOf(struct {
		TurnWaitMs int `toml:"turn_wait_ms"`
	}{cmp.Or(c.MCP.TurnWaitMs, 1000)}), getenv)
	for _, name := range sortedKeys(c.MCP.Servers) {
		c.writeTable(w, "mcp.servers."+quoteKey(name), reflect.ValueOf(c.MCP.Servers[name]), getenv)
	}
	c.writeTable(w, "sandbox", reflect.ValueOf(c.Sandbox), getenv)
	c.writeTable(w, "checkpoints", reflect.ValueOf(c.Checkpoints), getenv)
	c.writeTable(w, "tools", reflect.ValueOf(c.Tools), getenv)
	c.writeTable(w, "budget", reflect.ValueOf(c.Budget), getenv)
	for i, p := range c.Permissions {
		c.writeEntry(w, "permissions", i, reflect.ValueOf(p))
	}
	for i, h := range c.Hooks {
		c.writeEntry(w, "hooks", i, reflect.ValueOf(h))
	}
}

// writeEntry writes one entry of an array of tables ([[permissions]],
// [[hooks]]), which come from the file, in its order.
func (c *Config) writeEntry(w io.Writer, table string, i int, v reflect.Value) {
	fmt.Fprintf(w, "\n[[%s]]  # %d of %s, %s\n", table, i+1, table, c.Origin(fmt.Sprintf("%s.%d", table, i)))
	t := v.Type()
	for f := range t.NumField() {
		tag := t.Field(f).Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		fmt.Fprintf(w, "%s = %s\n", tag, tomlValue(v.Field(f).Interface()))
	}
}

func (c *Config) writeTable(w io.Writer, table string, v reflect.Value, getenv func(string) string) {
	fmt.Fprintf(w, "\n[%s]\n", table)
	t := v.Type()
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		key := strings.ReplaceAll(table, `"`, "") + "." + tag
		val := v.Field(i)
		var text string
		if val.Kind() == reflect.Map {
			text = inlineTable(val, isSecretMap(tag))
		} else if tag == "oauth_client_secret" && val.String() != "" {
			text = `"(hidden)"`
		} else {
			text = tomlValue(val.Interface())
		}
		origin := c.Origin(key)
		if tag == "api_key_env" && val.String() != "" {
			if getenv(val.String()) == "" {
				origin += "; NOT SET: requests go without a key"
			} else {
				origin += "; set"
			}
		}
		fmt.Fprintf(w, "%-44s # %s\n", tag+" = "+text, origin)
	}
}

// isSecretMap: the values of these maps may hold keys and tokens.
func isSecretMap(tag string) bool { return tag == "env" || tag == "headers" }

func inlineTable(m reflect.Value, hide bool) string {
	keys := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		keys = append(keys, k.String())
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := tomlValue(m.MapIndex(reflect.ValueOf(k)).Interface())
		if hide {
			v = `"<hidden>"`
		}
		parts = append(parts, quoteKey(k)+" = "+v)
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// tomlValue renders a scalar or an array as TOML.
func tomlValue(v any) string {
	b, err := toml.Marshal(map[string]any{"v": v})
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "[]" // a nil slice is left out
	}
	_, after, _ := strings.Cut(s, "=")
	return strings.TrimSpace(after)
}

// quoteKey quotes a table or key name that is not a bare TOML key.
func quoteKey(k string) string {
	for _, r := range k {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Sprintf("%q", k)
		}
	}
	return k
}
