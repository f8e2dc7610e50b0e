package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// web_fetch's bounds.
const (
	fetchMaxBytes  = 10 << 20 // of the response body read
	fetchRedirects = 10
)

// fetchTimeout bounds a fetch, from the dial to the body's end (a
// variable so a test can wait less).
var fetchTimeout = 30 * time.Second

// webFetchArgs are web_fetch's arguments.
type webFetchArgs struct {
	URL string `json:"url" jsonschema:"http:// or https:// URL"`
}

type webFetch struct{ takes[webFetchArgs] }

func (t webFetch) Spec() Spec {
	return Spec{Name: "web_fetch", Guide: "Read a web page (as Markdown) with web_fetch when the answer is on the web, not in the project.",
		Description: "Fetch a URL (http or https) and return its text; an HTML page comes back as Markdown. At most 10 MB read, 30 s, 256 KiB returned.",
		Schema:      t.schema()}
}
func (webFetch) Asks() bool   { return true }
func (webFetch) Kind() string { return protocol.KindFetch }
func (t webFetch) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Fetch " + a.URL
}

// fetchURL checks a URL web_fetch may ask for: http or https, with a host.
func fetchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("only http and https URLs are fetched, not %q", u.Scheme+":")
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s has no host", raw)
	}
	return u, nil
}

func (t webFetch) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	u, err := fetchURL(a.URL)
	if err != nil {
		return errorf("%v", err)
	}
	if sb := env.Sandbox; sb != nil && sb.Refuse == "" && !sb.Network {
		// The daemon's own fetch follows the session's network, as
		// its commands do.
		return errorf("not fetched: this session has no network ([sandbox] network = false, or session/configure network: false)")
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	var gateway string
	if env.Gateway != nil {
		gateway = env.Gateway()
	}
	dialer := &net.Dialer{Timeout: fetchTimeout, Control: refuseGateway(gateway)}
	client := &http.Client{
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: fetchTimeout},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= fetchRedirects {
				return fmt.Errorf("more than %d redirects", fetchRedirects)
			}
			if _, err := fetchURL(req.URL.String()); err != nil {
				return fmt.Errorf("redirected to %s: %v", req.URL.Redacted(), err)
			}
			return nil
		},
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errorf("%v", err)
	}
	req.Header.Set("User-Agent", "zeroclaw-web-fetch")
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errorf("%s: no answer within %v", a.URL, fetchTimeout)
		}
		return errorf("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, fetchMaxBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errorf("%s: the body did not arrive within %v", a.URL, fetchTimeout)
		}
		return errorf("%s: %v", a.URL, err)
	}
	cut := len(body) > fetchMaxBytes
	if cut {
		body = body[:fetchMaxBytes]
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var text string
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		md, err := htmltomarkdown.ConvertString(string(body))
		if err != nil {
			return errorf("%s: the page could not be read as HTML: %v", a.URL, err)
		}
		text = md
	case strings.HasPrefix(mediaType, "text/") || strings.HasSuffix(mediaType, "json") || strings.HasSuffix(mediaType, "xml") || mediaType == "" && utf8.Valid(body):
		text = string(body)
	default:
		return errorf("%s: %s content (%d bytes) is not text", a.URL, mediaType, len(body))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n\n", resp.Status, resp.Request.URL.Redacted())
	if len(text) > maxRead {
		text = text[:maxRead] + fmt.Sprintf("\n[cut: only the first %d bytes of the text are shown]", maxRead)
	}
	b.WriteString(text)
	if cut {
		fmt.Fprintf(&b, "\n[the body is over %d bytes: only its first %d bytes were read]", fetchMaxBytes, fetchMaxBytes)
	}
	out := Result{Output: b.String()}
	if resp.StatusCode >= 400 {
		out.IsError = true
	}
	return out
}

// refuseGateway returns a dialer Control that refuses the daemon's own
// gateway: its port on a loopback address, on its own address, or, when
// it listens on every address, on any of this machine's. It runs on the
// address actually dialed, so no name, redirect or rebinding gets past.
func refuseGateway(gatewayURL string) func(network, address string, c syscall.RawConn) error {
	if gatewayURL == "" {
		return nil
	}
	gu, err := url.Parse(gatewayURL)
	if err != nil {
		return nil
	}
	gw, err := netip.ParseAddrPort(gu.Host)
	if err != nil {
		return nil
	}
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || ap.Port() != gw.Port() {
			return nil
		}
		ip := ap.Addr().Unmap()
		if ip.IsLoopback() || ip == gw.Addr().Unmap() || gw.Addr().IsUnspecified() && isLocal(ip) {
			return fmt.Errorf("%s is the daemon's own gateway: web_fetch does not reach it", address)
		}
		return nil
	}
}

// isLocal reports whether ip is an address of this machine.
func isLocal(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: refuse
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == ip {
			return true
		}
	}
	return false
}
