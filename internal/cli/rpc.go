package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

// rpcCmd is the seed's socat quick test without socat: lines from stdin go
// to the daemon as they are, every frame the daemon sends is printed.
func rpcCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "rpc", Short: "send NDJSON from stdin to the daemon and print every frame it sends", Args: noArgs}
	fs := c.Flags()
	noInit := fs.Bool("no-init", false, "do not send initialize first")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		configDir := g.configDir
		dirs, err := resolve(env, configDir)
		if err != nil {
			return err
		}
		nc, err := transport.Dial(ctx, dirs.Endpoint)
		if err != nil {
			return fmt.Errorf("no daemon answers at %s (%v); start one with 'zeroclaw daemon'", dirs.Endpoint, err)
		}
		defer nc.Close()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReaderSize(nc, 64<<10)
			for {
				line, err := br.ReadBytes('\n')
				if len(line) > 0 {
					env.Stdout.Write(line)
				}
				if err != nil {
					return
				}
			}
		}()
		if !*noInit {
			init := `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zeroclaw-rpc","version":"` + Version + `"}},"id":"rpc-init"}` + "\n"
			if _, err := io.WriteString(nc, init); err != nil {
				return err
			}
		}
		br := bufio.NewReaderSize(env.Stdin, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				if _, werr := nc.Write(line); werr != nil {
					return fmt.Errorf("daemon closed the connection: %w", werr)
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
		// Half-close: the daemon answers what is in flight, then closes.
		if uc, ok := nc.(*net.UnixConn); ok {
			uc.CloseWrite()
		} else {
			nc.Close()
		}
		wg.Wait()
		return nil
	})
	return c
}
