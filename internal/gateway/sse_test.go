package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/protocol/prototest"
)

// The SSE stream of a prompt passes every event type of protocol.Events
// on as it came (it reads only the envelope), an event that does not
// decode and one of a type this build does not know too, each once, with
// its seq as the id; turn_complete ends the stream's wait.
func TestSSEPassesOnEveryEvent(t *testing.T) {
	w := httptest.NewRecorder()
	s := &sse{w: w, rc: http.NewResponseController(w), end: make(chan struct{})}
	var raws [][]byte
	for i, ev := range prototest.Samples() {
		raws = append(raws, prototest.Update("s", int64(i+1), ev))
	}
	n := len(raws)
	raws = append(raws, []byte(fmt.Sprintf(`{"sessionId":"s","seq":%d,"type":"hook","error":{"code":1}}`, n+1)),
		[]byte(fmt.Sprintf(`{"sessionId":"s","seq":%d,"type":"from_the_future"}`, n+2)))
	for _, raw := range raws {
		s.update(raw)
		s.update(raw) // a replay's overlap: written once
	}
	var want strings.Builder
	for i, raw := range raws {
		fmt.Fprintf(&want, "id: %d\nevent: %s\ndata: %s\n\n", i+1, protocol.MethodSessionUpdate, raw)
	}
	if got := w.Body.String(); got != want.String() {
		t.Errorf("the stream:\n%s\nwant\n%s", got, want.String())
	}
	select {
	case <-s.end:
	default:
		t.Error("turn_complete did not end the stream's wait")
	}
}
