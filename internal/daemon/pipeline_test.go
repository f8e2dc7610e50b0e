package daemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/transport"
)

// pipelineCalls is how many calls TestPipelineWithoutReading sends.
const pipelineCalls = 100_000

// pipelineHeapBound is what the daemon's heap may grow by while a client
// pipelines calls without reading: the outbox's 8 MiB of answers, the
// calls in flight (64, each with its answer) and the frames being read,
// with room for the rest of the process (a GC cycle's garbage, the
// test's own buffers). Without the bound it grew by 87 MiB by the
// time every call was sent.
const pipelineHeapBound = 32 << 20

// A client that pipelines 100,000 calls on one connection and reads
// nothing meanwhile does not grow the daemon beyond a bound: the daemon
// stops reading once its calls in flight and the answers waiting are at
// their bounds. The calls alternate between status (answered on the
// read loop) and schedule/list (answered off it), so both ways are
// bounded. Once the client reads, every call is answered, once.
func TestPipelineWithoutReading(t *testing.T) {
	r := startWith(t, echoAgent)
	nc, err := transport.Dial(t.Context(), r.dirs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	if _, err := nc.Write([]byte(initFrame + "\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	before := heapInUse()

	// The writer sends the calls in chunks. A write that makes no
	// progress for a second means the daemon has stopped reading: it
	// says so once, and goes on writing (the rest goes once the test
	// reads).
	stalled := make(chan struct{})
	written := make(chan error, 1)
	go func() {
		stall := stalled
		var chunk []byte
		for i := 1; i <= pipelineCalls; i++ {
			method := "status"
			if i%2 == 0 {
				method = "schedule/list"
			}
			chunk = append(chunk, `{"jsonrpc":"2.0","id":`...)
			chunk = strconv.AppendInt(chunk, int64(i), 10)
			chunk = append(chunk, `,"method":"`+method+`","params":{}}`+"\n"...)
			if len(chunk) < 32<<10 && i < pipelineCalls {
				continue
			}
			for len(chunk) > 0 {
				nc.SetWriteDeadline(time.Now().Add(time.Second))
				n, err := nc.Write(chunk)
				chunk = chunk[n:]
				if errors.Is(err, os.ErrDeadlineExceeded) {
					if stall != nil {
						close(stall)
						stall = nil
					}
					continue
				}
				if err != nil {
					written <- err
					return
				}
			}
		}
		nc.SetWriteDeadline(time.Time{})
		written <- nil
	}()

	// The heap is measured when the daemon stops reading, or when every
	// call was sent (a daemon that never stops reading has taken them all
	// in by then).
	select {
	case <-stalled:
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
		written <- nil
	}
	grew := heapInUse() - before
	t.Logf("the daemon's heap grew by %.1f MiB (bound %d MiB)", float64(grew)/(1<<20), pipelineHeapBound>>20)
	if grew > pipelineHeapBound {
		t.Errorf("the daemon's heap grew by %.1f MiB while the client did not read, over the bound of %d MiB", float64(grew)/(1<<20), pipelineHeapBound>>20)
	}

	seen := make([]bool, pipelineCalls+1)
	for n := 0; n < pipelineCalls; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", n, err)
		}
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.ID < 1 || m.ID > pipelineCalls {
			t.Fatalf("answer %d: %.200s (%v)", n, line, err)
		}
		if seen[m.ID] {
			t.Fatalf("call %d answered twice", m.ID)
		}
		seen[m.ID] = true
		if m.Result == nil {
			t.Fatalf("call %d: %.200s", m.ID, line)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
}

// heapInUse is the process's live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}
