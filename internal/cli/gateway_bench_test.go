package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// BenchmarkIdleWebSockets reports the daemon's resident memory growth
// with 1,000 initialized idle WebSocket clients of its gateway, per
// client (Linux only; a real daemon process).
func BenchmarkIdleWebSockets(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	dir := filepath.Join(testdir.New(b), "cfg")
	exe, _ := os.Executable()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(exe, "daemon", "--gateway", "127.0.0.1:0")
		cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+dir, "ZEROCLAW_TEST_MAIN=1")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sock := filepath.Join(dir, "data", "daemon.sock")
		var nc net.Conn
		for deadline := time.Now().Add(10 * time.Second); ; {
			var err error
			if nc, err = net.Dial("unix", sock); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("daemon not ready")
			}
			time.Sleep(time.Millisecond)
		}
		br := bufio.NewReader(nc)
		call := func(frame string) map[string]any {
			nc.Write([]byte(frame + "\n"))
			line, err := br.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(line, &m)
			return m
		}
		call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
		pair, _ := call(`{"jsonrpc":"2.0","id":1,"method":"gateway/pair"}`)["result"].(map[string]any)
		url, _ := pair["url"].(string)
		resp, err := http.Post(url+"/pair", "application/json", strings.NewReader(`{"code":"`+pair["code"].(string)+`"}`))
		if err != nil {
			b.Fatal(err)
		}
		var tok struct{ Token string }
		json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		time.Sleep(200 * time.Millisecond)
		idle := rssKB(b, cmd.Process.Pid)
		var conns []*websocket.Conn
		ws := strings.Replace(url, "http", "ws", 1) + "/ws"
		for range 1000 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok.Token}}})
			if err != nil {
				b.Fatal(err)
			}
			c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
			if _, _, err := c.Read(ctx); err != nil {
				b.Fatal(err)
			}
			cancel()
			conns = append(conns, c)
		}
		time.Sleep(200 * time.Millisecond)
		busy := rssKB(b, cmd.Process.Pid)
		st := call(`{"jsonrpc":"2.0","id":2,"method":"status"}`)
		res, _ := st["result"].(map[string]any)
		if n, _ := res["clients"].(float64); n < 1000 {
			b.Fatalf("%v clients served, want 1,000 and more", n)
		}
		b.ReportMetric(float64(busy-idle)/1000, "kB/idle-ws")
		for _, c := range conns {
			c.CloseNow()
		}
		nc.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}
}
