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
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

// runDaemonStop stops the running daemon (shutdown, then waits until its
// socket is gone); restart starts it again as it was (ephemeral or not,
// with its gateway's address), in the background, logging to
// <data dir>/daemon.log.
func daemonStopCmd(g *globals, verb string) *cobra.Command {
	short := "stop the running daemon"
	if verb == "restart" {
		short = "stop the running daemon and start it again as it was (in the background)"
	}
	return &cobra.Command{Use: verb, Short: short, Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			return runDaemonStop(ctx, env, g.configDir, verb)
		})}
}

func runDaemonStop(ctx context.Context, env console.Env, configDir, verb string) error {
	dirs, err := resolve(env, configDir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	opts := client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-daemon-" + verb, Version: Version}}
	c, err := client.Dial(ctx, dirs.Endpoint, opts)
	if errors.Is(err, client.ErrNoDaemon) && verb == "stop" {
		return console.Exitf(1, "no daemon is running at %s", dirs.Endpoint)
	}
	var was *protocol.StatusResult
	if err == nil {
		was, err = c.Status(ctx)
		if err == nil {
			// A connection closed by the stopping daemon is the stop too.
			if err = c.Shutdown(ctx); errors.Is(err, jsonrpc.ErrClosed) {
				err = nil
			}
		}
		c.Close()
		if err != nil {
			return err
		}
		// Gone when its socket no longer answers and its process has let
		// the data directory go (it closes the socket first, then the
		// store, and its lock goes with its process): a daemon started
		// right after finds the directory free.
		for {
			if nc, err := transport.Dial(ctx, dirs.Endpoint); err == nil {
				nc.Close()
			} else if transport.DirFree(dirs.DataDir) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("the daemon (pid %d) did not stop within 30 s", was.PID)
			case <-time.After(20 * time.Millisecond):
			}
		}
		fmt.Fprintf(env.Stdout, "stopped the daemon (pid %d)\n", was.PID)
	}
	if verb == "stop" {
		return nil
	}
	s := client.StartOptions{ConfigDir: dirs.ConfigDir, DataDir: dirs.DataDir, Env: env.Environ, Persistent: was == nil || !was.Ephemeral}
	if was != nil && was.Gateway != "" {
		addr := was.Gateway[strings.Index(was.Gateway, "://")+3:]
		s.Args = []string{"--gateway=" + addr}
	}
	nc, err := client.DialOrStart(ctx, dirs.Endpoint, opts, s)
	if err != nil {
		return err
	}
	defer nc.Close()
	fmt.Fprintf(env.Stdout, "started the daemon (pid %d); its log is %s\n", nc.Init.ServerPID, filepath.Join(dirs.DataDir, "daemon.log"))
	return nil
}

// runDaemonLogs prints the end of the background daemon's log
// (<data dir>/daemon.log), and with -f follows it until interrupted.
func daemonLogsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "logs", Short: "print the end of the background daemon's log", Args: noArgs}
	lines := c.Flags().IntP("lines", "n", 50, "how many lines of the end to print")
	follow := c.Flags().BoolP("follow", "f", false, "keep printing what is written")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		return runDaemonLogs(ctx, env, g.configDir, *lines, *follow)
	})
	return c
}

func runDaemonLogs(ctx context.Context, env console.Env, configDir string, linesValue int, followValue bool) error {
	lines, follow := &linesValue, &followValue
	dirs, err := resolve(env, configDir)
	if err != nil {
		return err
	}
	path := filepath.Join(dirs.DataDir, "daemon.log")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return console.Exitf(1, "no log at %s: a daemon started in the foreground logs to its terminal", path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	// The last n lines, reading at most the last 1 MiB.
	size, _ := f.Seek(0, io.SeekEnd)
	from := max(size-1<<20, 0)
	f.Seek(from, io.SeekStart)
	var tail []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		tail = append(tail, sc.Text())
		if len(tail) > *lines {
			tail = tail[1:]
		}
	}
	for _, l := range tail {
		fmt.Fprintln(env.Stdout, l)
	}
	if !*follow {
		return nil
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	pos, _ := f.Seek(0, io.SeekEnd)
	buf := make([]byte, 64<<10)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		if fi, err := os.Stat(path); err == nil && fi.Size() < pos { // rotated or truncated
			pos = 0
		}
		f.Seek(pos, io.SeekStart)
		for {
			n, err := f.Read(buf)
			env.Stdout.Write(buf[:n])
			pos += int64(n)
			if err != nil || n == 0 {
				break
			}
		}
	}
}
