package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// status is the one answer a client may ask for many times a second (a
// dashboard's poll, a script's health check), so it is encoded by hand,
// without reflection: AppendJSON writes byte for byte what encoding/json
// writes for it without HTML escaping (a test compares them on every
// member, filled and empty), which is what the daemon's connections write.

// AppendJSON appends r's JSON encoding to b (jsonrpc's Appender).
func (r *StatusResult) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"serverVersion":`...)
	b = appendString(b, r.ServerVersion)
	b = append(b, `,"protocolVersion":`...)
	b = strconv.AppendInt(b, int64(r.ProtocolVersion), 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(r.PID), 10)
	b = append(b, `,"uptimeMs":`...)
	b = strconv.AppendInt(b, r.UptimeMs, 10)
	b = append(b, `,"endpoint":`...)
	b = appendString(b, r.Endpoint)
	b = append(b, `,"configDir":`...)
	b = appendString(b, r.ConfigDir)
	b = append(b, `,"dataDir":`...)
	b = appendString(b, r.DataDir)
	b = append(b, `,"ephemeral":`...)
	b = strconv.AppendBool(b, r.Ephemeral)
	b = append(b, `,"clients":`...)
	b = strconv.AppendInt(b, int64(r.Clients), 10)
	b = append(b, `,"activeSessions":`...)
	b = strconv.AppendInt(b, int64(r.ActiveSessions), 10)
	b = append(b, `,"sessions":`...)
	b = appendList(b, r.Sessions, (*SessionSummary).appendJSON)
	b = append(b, `,"provider":`...)
	b = appendString(b, r.Provider)
	b = appendOmitString(b, `,"gateway":`, r.Gateway)
	b = appendOmitString(b, `,"model":`, r.Model)
	b = appendOmitString(b, `,"providerUrl":`, r.ProviderURL)
	if len(r.MCPServers) > 0 {
		b = append(b, `,"mcpServers":`...)
		b = appendList(b, r.MCPServers, (*MCPServerStatus).appendJSON)
	}
	if len(r.ConfigWarnings) > 0 {
		b = append(b, `,"configWarnings":`...)
		b = appendList(b, r.ConfigWarnings, func(s *string, b []byte) []byte { return appendString(b, *s) })
	}
	b = append(b, `,"agents":`...)
	b = appendList(b, r.Agents, (*AgentStatus).appendJSON)
	b = append(b, `,"today":`...)
	b, err := r.Today.appendJSON(b)
	if err != nil {
		return b, err
	}
	b = append(b, `,"sandbox":`...)
	b = r.Sandbox.appendJSON(b)
	if w := r.StayingFor; w != nil {
		b = append(b, `,"stayingFor":{`...)
		n := len(b)
		for _, c := range []struct {
			name string
			v    int
		}{{"turns", w.Turns}, {"queued", w.Queued}, {"processes", w.Processes}, {"goals", w.Goals}, {"subagents", w.Subagents}} {
			if c.v == 0 {
				continue
			}
			if len(b) > n {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), c.name...), `":`...)
			b = strconv.AppendInt(b, int64(c.v), 10)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

func (s *SessionSummary) appendJSON(b []byte) []byte {
	b = append(b, `{"sessionId":`...)
	b = appendString(b, s.SessionID)
	b = append(b, `,"agentAlias":`...)
	b = appendString(b, s.AgentAlias)
	b = append(b, `,"mode":`...)
	b = appendString(b, s.Mode)
	b = append(b, `,"state":`...)
	b = appendString(b, s.State)
	b = append(b, `,"clients":`...)
	b = strconv.AppendInt(b, int64(s.Clients), 10)
	return append(b, '}')
}

func (s *MCPServerStatus) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"state":`...)
	b = appendString(b, s.State)
	b = append(b, `,"tools":`...)
	b = strconv.AppendInt(b, int64(s.Tools), 10)
	b = appendOmitString(b, `,"error":`, s.Error)
	if s.PerSession {
		b = append(b, `,"perSession":true`...)
	}
	b = appendOmitString(b, `,"sessionId":`, s.SessionID)
	if len(s.Hidden) > 0 {
		b = append(b, `,"hiddenTools":`...)
		b = appendList(b, s.Hidden, func(h *MCPHiddenTool, b []byte) []byte {
			b = append(b, `{"name":`...)
			b = appendString(b, h.Name)
			b = append(b, `,"why":`...)
			b = appendString(b, h.Why)
			return append(b, '}')
		})
	}
	b = appendOmitString(b, `,"auth":`, s.Auth)
	b = appendOmitString(b, `,"protocolVersion":`, s.ProtocolVersion)
	return append(b, '}')
}

func (a *AgentStatus) appendJSON(b []byte) []byte {
	b = append(b, `{"alias":`...)
	b = appendString(b, a.Alias)
	b = append(b, `,"provider":`...)
	b = appendString(b, a.Provider)
	b = append(b, `,"providerKind":`...)
	b = appendString(b, a.ProviderKind)
	b = append(b, `,"model":`...)
	b = appendString(b, a.Model)
	b = append(b, `,"risk":`...)
	b = appendString(b, a.Risk)
	return append(b, '}')
}

func (t *SpendToday) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"day":`...)
	b = appendString(b, t.Day)
	b = append(b, `,"usage":`...)
	b, err := t.Usage.appendJSON(b)
	if err != nil {
		return b, err
	}
	if t.MaxCostUSDPerDay != 0 {
		b = append(b, `,"maxCostUsdPerDay":`...)
		if b, err = appendFloat(b, t.MaxCostUSDPerDay); err != nil {
			return b, err
		}
	}
	if t.MaxCostUSDPerSession != 0 {
		b = append(b, `,"maxCostUsdPerSession":`...)
		if b, err = appendFloat(b, t.MaxCostUSDPerSession); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func (u *Usage) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"inputTokens":`...)
	b = strconv.AppendInt(b, u.InputTokens, 10)
	b = append(b, `,"outputTokens":`...)
	b = strconv.AppendInt(b, u.OutputTokens, 10)
	if u.CacheReadTokens != 0 {
		b = append(b, `,"cacheReadTokens":`...)
		b = strconv.AppendInt(b, u.CacheReadTokens, 10)
	}
	if u.CacheWriteTokens != 0 {
		b = append(b, `,"cacheWriteTokens":`...)
		b = strconv.AppendInt(b, u.CacheWriteTokens, 10)
	}
	if u.CostUSD != nil {
		b = append(b, `,"costUsd":`...)
		var err error
		if b, err = appendFloat(b, *u.CostUSD); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func (s *SandboxStatus) appendJSON(b []byte) []byte {
	b = append(b, `{"mode":`...)
	b = appendString(b, s.Mode)
	b = append(b, `,"network":`...)
	b = strconv.AppendBool(b, s.Network)
	b = append(b, `,"enforcedBy":`...)
	b = appendString(b, s.EnforcedBy)
	b = appendOmitString(b, `,"reason":`, s.Reason)
	b = append(b, `,"namespaces":`...)
	b = strconv.AppendBool(b, s.Namespaces)
	b = appendOmitString(b, `,"namespacesReason":`, s.NamespacesReason)
	return append(b, '}')
}

// appendList appends a slice as encoding/json does: null when nil.
func appendList[T any](b []byte, list []T, each func(*T, []byte) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(&list[i], b)
	}
	return append(b, ']')
}

// appendOmitString appends member (`,"name":`) and s unless s is empty
// (omitempty).
func appendOmitString(b []byte, member, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, member...), s)
}

// appendString appends s as a JSON string as encoding/json writes it
// without HTML escaping: as it is when nothing in it needs escaping,
// else encoding/json's own (its escapes, U+FFFD for invalid UTF-8).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			var q bytes.Buffer
			enc := json.NewEncoder(&q)
			enc.SetEscapeHTML(false)
			enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimSuffix(q.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plain: the bytes a JSON string holds as they are (printable ASCII but
// the quote and the backslash).
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendFloat appends f as encoding/json writes a float64 (its format
// and exponent spelling), an error for NaN and the infinities.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 as 1e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
