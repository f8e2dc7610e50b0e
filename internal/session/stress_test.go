package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Every operation that takes two of the package's locks at once, run
// concurrently on a few sessions by several clients (prompts with tool
// calls that ask, steers, queue edits, cancels and withdrawals,
// approvals, compactions, attaching, closing, unloading and
// reloading, the list and its followers, status, spend), under the race
// detector: a lock taken out of the written order (session.go) deadlocks
// here, and the deadline below says so with every goroutine's stack.
func TestLockOrderUnderStress(t *testing.T) { stress(t, nil, nil, nil) }

// StressOp is one more operation of the stress (a participant's, from a
// test outside the package): what succeeded ("": nothing counted), and
// its error.
type StressOp func(ctx context.Context, r *rand.Rand, m *Manager, cl *Client, id, cwd string) (string, error)

// stress runs the stress with join's participants joined to the
// manager and ops among the operations; each of must has to succeed at
// least once.
func stress(t *testing.T, join func(*Manager, *store.Store), ops []StressOp, must []string) {
	h := newHarnessWith(t, func(cfg *config.Config) {
		supervised(cfg)
		cfg.Daemon.ApprovalTimeoutSecs = 1
		cfg.Daemon.MaxSessions = 3 // so that opening one unloads another
	}, func(o *Options) { o.CheckpointDir = t.TempDir() })
	if join != nil {
		join(h.m, h.st)
	}
	ctx := context.Background()
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("a"), 0o644)
	ids := []string{"s0", "s1", "s2", "s3"}
	const workers, rounds = 6, 150
	var wg sync.WaitGroup
	var nmu sync.Mutex
	did := map[string]int{} // what succeeded, so the test is known to reach each path
	count := func(what string, err error) {
		if err == nil {
			nmu.Lock()
			did[what]++
			nmu.Unlock()
		}
	}
	for w := range workers {
		cl, c := h.client(t, fmt.Sprintf("c%d", w))
		h.m.Watch(cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			// The client reads what it is sent (its writer), and answers
			// every approval it sees.
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-c.pending:
						c.mu.Lock()
						q := c.queue
						c.queue = nil
						c.mu.Unlock()
						for _, src := range q {
							for more := true; more; {
								buf, m, err := src.AppendFrames(nil, true, 1<<20)
								if err != nil {
									break
								}
								more = m
								for _, line := range bytes.Split(buf, []byte("\n")) {
									var f struct{ Params json.RawMessage }
									if !bytes.Contains(line, []byte(`"approval_request"`)) || json.Unmarshal(line, &f) != nil {
										continue
									}
									u, err := protocol.ParseUpdate(f.Params)
									if a, ok := u.Event.(protocol.ApprovalRequestEvent); ok && err == nil {
										ok, _ := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: u.SessionID, RequestID: a.RequestID, Decision: protocol.Decisions[rand.IntN(len(protocol.Decisions))]})
										if ok {
											count("approve", nil)
										}
									}
								}
							}
						}
					case <-stop:
						return
					}
				}
			}()
			for range rounds {
				id := ids[r.IntN(len(ids))]
				switch n := r.IntN(11 + len(ops)); n {
				case 0, 1:
					_, err := h.m.New(ctx, cl, protocol.SessionNewParams{SessionID: id, Cwd: cwd, KeepSiblings: r.IntN(4) > 0})
					count("new", err)
				case 2:
					text := "/tool shell {\"command\":\"echo hi\"}\n/tool write_file {\"path\":\"b.txt\",\"content\":\"b\"}\n/chunks 20"
					p, err := h.m.Submit(cl, id, Input{Text: text})
					count("prompt", err)
					if err == nil {
						if r.IntN(3) == 0 {
							p.Withdraw()
						}
						go func() { <-p.Done }()
					}
				case 3:
					text := "steer"
					_, err := h.m.Steer(ctx, cl, protocol.SessionSteerParams{SessionID: id, Prompt: &text, IdleBehavior: "start"})
					count("steer", err)
				case 4:
					h.m.Cancel(cl, id)
				case 5:
					if q, err := h.m.Queue(cl, id); err == nil && len(q.Items) > 0 {
						if r.IntN(2) == 0 {
							h.m.QueueSteer(context.Background(), cl, id, q.Items[0].ID, "")
						} else {
							h.m.QueueRemove(cl, id, q.Items[0].ID)
						}
					}
				case 6:
					if s, err := h.m.lookup(cl, id); err == nil {
						if rid := s.t.Asking(); rid != "" {
							ok, _ := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: id, RequestID: rid, Decision: protocol.Decisions[r.IntN(len(protocol.Decisions))]})
							if ok {
								count("approve", nil)
							}
						}
					}
				case 7:
					cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
					h.m.Compact(cctx, cl, id)
					cancel()
				case 8:
					count("close", h.m.Close(cl, id))
				case 9:
					h.m.Archive().List(ctx, protocol.SessionListParams{})
					h.m.Summaries()
					h.m.Archive().Get(ctx, id)
					h.m.Today()
				case 10:
					h.m.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: id})
					h.m.Archive().History(ctx, protocol.SessionHistoryParams{SessionID: id, Limit: 5}, 1<<20)
				default:
					what, err := ops[n-11](ctx, r, h.m, cl, id, cwd)
					if what != "" {
						count(what, err)
					}
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		t.Logf("succeeded: %v", did)
		for _, what := range append([]string{"new", "prompt", "steer", "approve", "close"}, must...) {
			if did[what] == 0 {
				t.Errorf("no %s succeeded (%v): the stress does not reach it", what, did)
			}
		}
	case <-time.After(3 * time.Minute):
		buf := make([]byte, 1<<22)
		panic(fmt.Sprintf("a deadlock: the workers did not finish\n%s", buf[:runtimeStack(buf)]))
	}
}

func runtimeStack(buf []byte) int { return runtime.Stack(buf, true) }
