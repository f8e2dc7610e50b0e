package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// freePort is a loopback address nothing listens on now.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// series reads the value of one series of a Prometheus text exposition
// ("" when it is absent).
func series(body []byte, name string) string {
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return v
		}
	}
	return ""
}

// /metrics takes a credential on the gateway and none on metrics_listen
// (loopback only); after a turn the counters say so, with bounded labels
// (no session id anywhere).
func TestMetricsRoute(t *testing.T) {
	addr := freePort(t)
	g := start(t, func(c *config.Config, _ *daemon.Options) { c.Gateway.MetricsListen = addr })
	tok, _ := g.pair("metrics test")
	if resp, _ := g.do("GET", "/metrics", nil, ""); resp.StatusCode != 401 {
		t.Fatalf("/metrics without a credential: %d", resp.StatusCode)
	}
	c, err := client.Dial(context.Background(), g.sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.NewSession(context.Background(), protocol.SessionNewParams{SessionID: "metered", Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	text := "count me"
	if _, err := c.Prompt(context.Background(), protocol.SessionPromptParams{SessionID: "metered", Prompt: &text}); err != nil {
		t.Fatal(err)
	}
	resp, body := g.do("GET", "/metrics", bearer(tok), "")
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics with a token: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{`zeroclaw_turns_total{stop_reason="end_turn"}`, `zeroclaw_provider_requests_total{model="echo",outcome="ok",provider="echo"}`,
		`zeroclaw_sessions{state="stored"}`, `zeroclaw_connections{transport="socket"}`,
		`zeroclaw_bytes_sent_total{transport="socket"}`, `zeroclaw_bytes_received_total{transport="socket"}`,
		`zeroclaw_bytes_sent_total{transport="gateway"}`, `zeroclaw_bytes_received_total{transport="gateway"}`} {
		if v := series(body, want); v == "" || v == "0" {
			t.Errorf("%s = %q in\n%.2000s", want, v, body)
		}
	}
	for _, want := range []string{"zeroclaw_events_sent_total", "zeroclaw_store_commit_seconds_count", "zeroclaw_provider_request_seconds_count"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("no %s", want)
		}
	}
	if bytes.Contains(body, []byte("metered")) {
		t.Error("a session id is a label")
	}
	// metrics_listen: the same, without a credential.
	r2, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 200 || series(b2, `zeroclaw_turns_total{stop_reason="end_turn"}`) == "" {
		t.Fatalf("metrics_listen: %d %.300s", r2.StatusCode, b2)
	}
}

// A non-loopback metrics_listen is refused: it serves without a
// credential.
func TestMetricsListenIsLoopbackOnly(t *testing.T) {
	cfg := config.Default(func(string) string { return "" })
	cfg.Gateway.MetricsListen = "0.0.0.0:9464"
	if err := cfg.Gateway.CheckMetricsListen(); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("0.0.0.0: %v", err)
	}
}

// Debian's prometheus scrapes metrics_listen and a series reads back
// through its HTTP API.
func TestPrometheusScrapesTheDaemon(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (.ci/run installs Debian's)")
	}
	addr := freePort(t)
	g := start(t, func(c *config.Config, _ *daemon.Options) { c.Gateway.MetricsListen = addr })
	c, err := client.Dial(context.Background(), g.sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.NewSession(context.Background(), protocol.SessionNewParams{SessionID: "scraped", Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	text := "scrape me"
	if _, err := c.Prompt(context.Background(), protocol.SessionPromptParams{SessionID: "scraped", Prompt: &text}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: zeroclaw\n    static_configs:\n      - targets: [%q]\n", addr)), 0o600)
	web := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	// Prometheus is another process: its API is asked again each 200 ms
	// until the scraped series is there (it scrapes each second).
	q := "http://" + web + "/api/v1/query?query=" + url.QueryEscape(`zeroclaw_turns_total{stop_reason="end_turn",job="zeroclaw"}`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var res struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if resp, err := http.Get(q); err == nil {
			json.NewDecoder(resp.Body).Decode(&res)
			resp.Body.Close()
		}
		if len(res.Data.Result) == 1 && len(res.Data.Result[0].Value) == 2 {
			if v := res.Data.Result[0].Value[1]; v != "0" {
				return // scraped and read back
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus never read zeroclaw_turns_total back; its log:\n%s", logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
