package tool

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWebFetch(t *testing.T) {
	env := fixture(t)
	done := make(chan struct{})
	defer close(done)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>T</title><script>var x=1;</script></head><body><h1>Title</h1><p>Hello <b>world</b>, see <a href="/next">next</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "plain text")
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("z", 1<<20))
		for range 50 { // 50 MB, if anyone read it all
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "the start")
		w.(http.Flusher).Flush()
		select { // the rest never comes
		case <-r.Context().Done():
		case <-done:
		}
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	r := run(t, env, "web_fetch", `{"url":"`+srv.URL+`/page"}`)
	if r.IsError || !strings.HasPrefix(r.Output, "200 OK "+srv.URL+"/page\n\n") ||
		!strings.Contains(r.Output, "# Title") || !strings.Contains(r.Output, "Hello **world**, see [next](/next).") ||
		!strings.Contains(r.Output, "- one\n- two") || strings.Contains(r.Output, "var x") {
		t.Errorf("HTML page as Markdown:\n%s", r.Output)
	}
	if r := run(t, env, "web_fetch", `{"url":"`+srv.URL+`/text"}`); r.IsError || !strings.HasSuffix(r.Output, "\n\nplain text") {
		t.Errorf("plain text: %+v", r)
	}
	r = run(t, env, "web_fetch", `{"url":"`+srv.URL+`/huge"}`)
	if r.IsError || !strings.HasSuffix(r.Output, "[the body is over 10485760 bytes: only its first 10485760 bytes were read]") || len(r.Output) > 300<<10 {
		t.Errorf("50 MB body: %d bytes, ends %q", len(r.Output), r.Output[max(0, len(r.Output)-120):])
	}
	for _, c := range []struct{ url, want string }{
		{srv.URL + "/to-file", "redirected to file:///etc/passwd: only http and https URLs are fetched"},
		{"file:///etc/passwd", `only http and https URLs are fetched, not "file:"`},
		{"ftp://example.com/x", `not "ftp:"`},
		{srv.URL + "/image", "image/png content (8 bytes) is not text"},
		{srv.URL + "/missing", "404 Not Found"},
	} {
		if r := run(t, env, "web_fetch", `{"url":"`+c.url+`"}`); !r.IsError || !strings.Contains(r.Output, c.want) {
			t.Errorf("%s: %+v, want an error saying %q", c.url, r, c.want)
		}
	}

	// The daemon's own gateway is refused by address, by name, and
	// through a redirect; another local server is not.
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "gateway secrets") }))
	defer gw.Close()
	env.Gateway = func() string { return gw.URL }
	port := gw.URL[strings.LastIndex(gw.URL, ":")+1:]
	mux.HandleFunc("/to-gateway", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/", http.StatusFound)
	})
	for _, u := range []string{gw.URL, "http://localhost:" + port + "/", srv.URL + "/to-gateway"} {
		if r := run(t, env, "web_fetch", `{"url":"`+u+`"}`); !r.IsError || !strings.Contains(r.Output, "is the daemon's own gateway") || strings.Contains(r.Output, "secrets") {
			t.Errorf("%s: %+v", u, r)
		}
	}
	if r := run(t, env, "web_fetch", `{"url":"`+srv.URL+`/text"}`); r.IsError {
		t.Errorf("another local server: %+v", r)
	}

	// A server that stops sending: the fetch ends at its time limit.
	defer func(d time.Duration) { fetchTimeout = d }(fetchTimeout)
	fetchTimeout = 300 * time.Millisecond
	if r := run(t, env, "web_fetch", `{"url":"`+srv.URL+`/slow"}`); !r.IsError || !strings.Contains(r.Output, "did not arrive within 300ms") {
		t.Errorf("slow server: %+v", r)
	}
}
