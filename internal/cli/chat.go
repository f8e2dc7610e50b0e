package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chzyer/readline"
	"golang.org/x/term"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

const chatHelp = `commands:
  /new           start a new session
  /sessions      list sessions
  /resume ID     continue session ID
  /cancel        cancel the running turn (Ctrl-C does it too)
  /compact       summarise earlier turns out of the model's view (the history keeps them)
  /model [M]     show the session's model, or switch it to M (see zeroclaw models)
  /status        the daemon's status
  /quit          leave (Ctrl-D too)
anything else is a prompt. Approvals: y once, a always, n no, e explain.`

// rlLines reads lines with line editing and history on a terminal.
type rlLines struct {
	rl     *readline.Instance
	prompt string
}

func (l *rlLines) ReadLine(prompt string) (string, error) {
	if prompt == "" {
		prompt = l.prompt
	}
	l.rl.SetPrompt(prompt)
	defer l.rl.SetPrompt(l.prompt)
	for {
		line, err := l.rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			if line == "" && prompt == l.prompt {
				return "", io.EOF // Ctrl-C on an empty prompt line leaves
			}
			continue
		}
		// Only prompts go to the history, not answers to questions.
		if err == nil && prompt == l.prompt && strings.TrimSpace(line) != "" {
			l.rl.SaveHistory(line)
		}
		return line, err
	}
}

// spinner shows that the model is working until the first event.
type spinner struct {
	w    io.Writer
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

func startSpinner(w io.Writer) *spinner {
	s := &spinner{w: w, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-s.stop:
				fmt.Fprint(s.w, "\r\x1b[K")
				return
			case <-t.C:
				fmt.Fprintf(s.w, "\r%c thinking", frames[i%len(frames)])
			}
		}
	}()
	return s
}

func (s *spinner) Stop() {
	if s == nil {
		return
	}
	s.once.Do(func() { close(s.stop); <-s.done })
}

// privateFile makes sure path exists as a file only its owner can read
// (0600, in a 0700 directory), whatever the umask: the chat history holds
// the user's prompts.
func privateFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chmod(path, 0o600)
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func chatCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "chat", Short: "talk with an agent interactively", Args: noArgs}
	fs := c.Flags()
	agentAlias := fs.String("agent", "default", "agent alias from the config")
	sessionID := fs.String("session", "", "session id to resume or create")
	cwd := fs.String("cwd", "", "working directory of new sessions (default: the current one)")
	approve := fs.String("approve", "ask", "approvals: ask, all, none")
	noStart := fs.Bool("no-start", false, "do not start a daemon when none is running")
	c.RunE = run(g, func(ctx context.Context, env Env, args []string) error {
		configDir := g.configDir
		if err := approveMode(*approve); err != nil {
			return err
		}
		if len(args) != 0 {
			return exitf(2, "chat takes no arguments (type prompts once it starts)")
		}
		if *cwd == "" {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			*cwd = wd
		}
		var err error
		if *cwd, err = absDir(*cwd); err != nil {
			return err
		}
		dirs, err := resolve(env, configDir)
		if err != nil {
			return err
		}
		tty := isTerminal(env.Stdin)
		var in lines
		if tty {
			history := filepath.Join(dirs.DataDir, "chat_history")
			if err := privateFile(history); err != nil {
				return err
			}
			rl, err := readline.NewEx(&readline.Config{
				Prompt: "› ", HistoryFile: history,
				Stdout: env.Stdout, Stderr: env.Stderr, InterruptPrompt: "^C", EOFPrompt: "",
				DisableAutoSaveHistory: true,
			})
			if err != nil {
				return err
			}
			defer rl.Close()
			in = &rlLines{rl: rl, prompt: "› "}
		} else {
			in = &plainLines{br: bufio.NewReader(env.Stdin), w: env.Stderr, echo: true}
		}
		cv := &conversation{env: env, configDir: configDir, noStart: *noStart, name: "zeroclaw-chat",
			caps: &protocol.ClientCapabilities{Elicitation: &protocol.Elicitation{Form: &struct{}{}}}, events: make(chan event, 1024)}
		cv.r = &renderer{out: env.Stdout, errw: env.Stderr, format: "text", approve: *approve, answers: in}
		c, err := cv.dial(ctx, "")
		if err != nil {
			return err
		}
		cv.c = c
		defer func() { cv.c.Close() }()
		newSession := func(id string) error {
			ns, err := cv.open(ctx, protocol.SessionNewParams{AgentAlias: *agentAlias, Cwd: *cwd, SessionID: id, Mode: "chat"})
			if err != nil {
				return err
			}
			verb := "new session"
			if ns.Resumed {
				verb = fmt.Sprintf("resumed session (%d messages)", ns.MessageCount)
			}
			fmt.Fprintf(env.Stderr, "%s %s · agent %s · %s\n", verb, ns.SessionID, ns.AgentAlias, ns.Cwd)
			return nil
		}
		if err := newSession(*sessionID); err != nil {
			return err
		}
		if tty {
			fmt.Fprintln(env.Stderr, "type /help for commands")
		}

		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, syscall.SIGINT)
		defer signal.Stop(sigs)
		prompt := ""
		if tty {
			prompt = "› "
		}
		for {
			line, err := in.ReadLine(prompt)
			if err != nil {
				return nil // EOF: leave
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "//") {
				word, arg, _ := strings.Cut(line, " ")
				arg = strings.TrimSpace(arg)
				switch word {
				case "/quit", "/exit":
					return nil
				case "/help":
					fmt.Fprintln(env.Stdout, chatHelp)
				case "/new":
					if err := newSession(""); err != nil {
						fmt.Fprintf(env.Stderr, "error: %v\n", err)
					}
				case "/resume":
					if arg == "" {
						fmt.Fprintln(env.Stderr, "usage: /resume ID (see /sessions)")
						continue
					}
					if err := newSession(arg); err != nil {
						fmt.Fprintf(env.Stderr, "error: %v\n", err)
					}
				case "/sessions":
					var page protocol.SessionListResult
					if err := cv.c.Call(ctx, protocol.MethodSessionList, protocol.SessionListParams{Limit: 20}, &page); err != nil {
						fmt.Fprintf(env.Stderr, "error: %v\n", err)
						continue
					}
					for _, s := range page.Sessions {
						mark := " "
						if s.SessionID == cv.r.sessionID {
							mark = "*"
						}
						fmt.Fprintf(env.Stdout, "%s %s  %s  %s  %s\n", mark, s.SessionID, time.UnixMilli(s.UpdatedMs).Format("01-02 15:04"), s.State, s.Title)
					}
				case "/cancel":
					var cr protocol.SessionCancelResult
					cv.c.Call(ctx, protocol.MethodSessionCancel, protocol.SessionRef{SessionID: cv.r.sessionID}, &cr)
					if !cr.Cancelled {
						fmt.Fprintln(env.Stderr, "nothing is running")
					}
				case "/model":
					var cr protocol.SessionConfigureResult
					params := protocol.SessionConfigureParams{SessionID: cv.r.sessionID}
					if arg != "" {
						params.Model = &arg
					}
					if err := cv.c.Call(ctx, protocol.MethodSessionConfigure, params, &cr); err != nil {
						fmt.Fprintf(env.Stderr, "error: %v\n", err)
						continue
					}
					fmt.Fprintf(env.Stdout, "model %s on %s (%s, %s), context window %d tokens\n", cr.Model, cr.Provider, cr.ProviderKind, cr.URL, cr.ContextWindow)
				case "/compact":
					var cr protocol.SessionCompactResult
					if err := cv.c.Call(ctx, protocol.MethodSessionCompact, protocol.SessionRef{SessionID: cv.r.sessionID}, &cr); err != nil {
						fmt.Fprintf(env.Stderr, "error: %v\n", err)
						continue
					}
					fmt.Fprintf(env.Stdout, "compacted: %d earlier message(s) summarised out of the model's view (the history keeps them)\n", cr.DroppedMessages)
				case "/status":
					st, err := cv.c.Status(ctx)
					if err != nil {
						fmt.Fprintf(env.Stderr, "error: %v\n", err)
						continue
					}
					fmt.Fprintf(env.Stdout, "daemon %s pid %d · provider %s · %d client(s) · %d live session(s) · session %s\n",
						st.ServerVersion, st.PID, st.Provider, st.Clients, st.ActiveSessions, cv.r.sessionID)
				default:
					fmt.Fprintf(env.Stderr, "unknown command %s; /help lists them (start a prompt with // to send a literal /)\n", word)
				}
				continue
			}
			line = strings.TrimPrefix(line, "/") // "//x" sends "/x"
			var spin *spinner
			if tty {
				spin = startSpinner(env.Stderr)
				cv.r.before = spin.Stop
			}
			res, err := cv.turn(ctx, line, sigs)
			spin.Stop()
			cv.r.before = nil
			var ee *exitError
			if errors.As(err, &ee) && ee.code == exitCancelled {
				return err // a second Ctrl-C: quit
			}
			if err != nil {
				fmt.Fprintf(env.Stderr, "error: %v\n", err)
				continue
			}
			switch res.StopReason {
			case "end_turn":
			case "cancelled":
				fmt.Fprintln(env.Stderr, "(cancelled)")
			default:
				if e := exitFor(res, true, env.Stderr); e != nil {
					fmt.Fprintf(env.Stderr, "(%v)\n", e)
				}
			}
		}
	})
	return c
}
