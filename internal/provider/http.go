package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// httpClient is what the HTTP providers share: the endpoint, retries with
// backoff on 429 and 5xx, and a stall timeout on the stream.
type httpClient struct {
	name    string // the provider's config name, for errors
	url     string
	headers map[string]string
	hc      *http.Client

	retries   int           // extra attempts after the first
	retryBase time.Duration // first backoff; doubles each time
	stall     time.Duration // longest silence on an open stream
}

func newHTTPClient(name, url string, headers map[string]string) *httpClient {
	return &httpClient{
		name: name, url: url, headers: headers,
		hc: &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ResponseHeaderTimeout: 120 * time.Second,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   4,
		}},
		retries: 3, retryBase: 500 * time.Millisecond, stall: 120 * time.Second,
	}
}

func (c *httpClient) fail(status int, format string, args ...any) *Error {
	return &Error{Provider: c.name, URL: c.url, Status: status, Message: fmt.Sprintf(format, args...)}
}

// sse posts payload (a JSON body) and calls onEvent for each server-sent event of the
// response until the stream ends or onEvent returns done or an error.
func (c *httpClient) sse(ctx context.Context, payload []byte, onEvent func(event string, data []byte) (done bool, err error)) error {
	resp, err := c.post(ctx, payload)
	if err != nil {
		return err
	}
	defer resp.Body.Close()

	// A stream that goes silent for too long is cut.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errStall := c.fail(0, "stream stalled: no data for %s", c.stall)
	timer := time.AfterFunc(c.stall, func() { cancel(errStall); resp.Body.Close() })
	defer timer.Stop()

	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var ev sseEvent
	for {
		line, err := readLine(br)
		timer.Reset(c.stall)
		if err != nil && len(line) == 0 {
			return c.sseEnded(ctx, sctx, err, &ev, onEvent)
		}
		if done, err := ev.line(bytes.TrimRight(line, "\r\n"), onEvent); err != nil || done {
			return err
		}
		if err != nil { // last line without newline: flush it
			if done, err := ev.flush(onEvent); err != nil || done {
				return err
			}
			return c.fail(0, "stream ended before the response was complete")
		}
	}
}

// readLine reads one line with its line ending (none at the end of the
// stream), however long: a long data line is gathered whole.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}

// sseEnded is what a stream that ended without a line (readErr) comes
// to: the caller's cancel, the last event, the stall or a cut stream.
func (c *httpClient) sseEnded(ctx, sctx context.Context, readErr error, ev *sseEvent, onEvent func(string, []byte) (bool, error)) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(readErr, io.EOF) {
		// The stream ended right after a data line, without the
		// blank line that ends an event ("data: [DONE]\n"): the
		// event is whole all the same.
		if done, err := ev.flush(onEvent); err != nil || done {
			return err
		}
	}
	if cause := context.Cause(sctx); cause != nil && cause != context.Canceled {
		return cause
	}
	if errors.Is(readErr, io.EOF) {
		return c.fail(0, "stream ended before the response was complete")
	}
	return c.fail(0, "read stream: %v", readErr)
}

// sseEvent is the server-sent event being read: its name and its data
// lines so far.
type sseEvent struct {
	name string
	data bytes.Buffer
}

// line takes one line of the stream, without its line ending: a blank
// line ends the event and hands it to onEvent, a field adds to it.
func (e *sseEvent) line(line []byte, onEvent func(string, []byte) (bool, error)) (done bool, err error) {
	switch {
	case len(line) == 0:
		if e.data.Len() > 0 || e.name != "" {
			if done, err := onEvent(e.name, e.data.Bytes()); err != nil || done {
				return done, err
			}
		}
		e.name = ""
		e.data.Reset()
	case line[0] == ':':
		// comment / keep-alive
	default:
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimPrefix(v, []byte(" "))
		switch string(k) {
		case "event":
			e.name = string(v)
		case "data":
			if e.data.Len() > 0 {
				e.data.WriteByte('\n')
			}
			e.data.Write(v)
		}
	}
	return false, nil
}

// flush hands on an event the stream ended in, one with data but no
// blank line after it.
func (e *sseEvent) flush(onEvent func(string, []byte) (bool, error)) (done bool, err error) {
	if e.data.Len() == 0 {
		return false, nil
	}
	return onEvent(e.name, e.data.Bytes())
}

// post sends the request, retrying on connection errors, 429 and 5xx
// before any of the response has been used.
func (c *httpClient) post(ctx context.Context, payload []byte) (*http.Response, error) {
	backoff := c.retryBase
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(payload))
		if err != nil {
			return nil, c.fail(0, "%v", err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		resp, err := c.hc.Do(req)
		var failure *Error
		wait := backoff
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			failure = c.fail(0, "%v", err)
		case resp.StatusCode == http.StatusOK:
			return resp, nil
		default:
			msg := errorMessage(resp.Body)
			resp.Body.Close()
			failure = c.fail(resp.StatusCode, "%s", msg)
			if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
				return nil, failure // the request itself is wrong: retrying won't help
			}
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
				wait = min(time.Duration(s)*time.Second, 30*time.Second)
			}
		}
		if attempt >= c.retries {
			if attempt > 0 {
				failure.Message += fmt.Sprintf(" (after %d attempts)", attempt+1)
			}
			return nil, failure
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		backoff *= 2
	}
}

// errorMessage reads the message of an error response body: the
// {"error":{"message"}} both APIs use, else the start of the body.
func errorMessage(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	if s == "" {
		s = "empty response"
	}
	return s
}

// getJSON GETs url (with the provider's headers) and decodes the JSON
// answer into v, bounded to 8 MiB.
func (c *httpClient) getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &Error{Provider: c.name, URL: url, Message: err.Error()}
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return &Error{Provider: c.name, URL: url, Message: err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &Error{Provider: c.name, URL: url, Status: resp.StatusCode, Message: errorMessage(resp.Body)}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(v); err != nil {
		return &Error{Provider: c.name, URL: url, Message: "decoding the answer: " + err.Error()}
	}
	return nil
}
