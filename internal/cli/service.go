package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/service"
)

// servicePlan is this user's service plan: the zeroclaw running now,
// with the directories this environment names.
func servicePlan(env console.Env, dirs config.Dirs) (service.Plan, error) {
	exe, err := os.Executable()
	if err != nil {
		return service.Plan{}, err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	vars := map[string]string{}
	for _, k := range []string{"ZEROCLAW_CONFIG_DIR", "ZEROCLAW_DATA_DIR", "ZEROCLAW_SOCKET", "ZEROCLAW_TEST_MAIN"} {
		if v := env.Getenv(k); v != "" {
			vars[k] = v
		}
	}
	user := env.Getenv("USER")
	if user == "" {
		user = env.Getenv("USERNAME")
	}
	home := env.Getenv("HOME")
	if runtime.GOOS == "windows" {
		home = env.Getenv("USERPROFILE")
	}
	return service.For(runtime.GOOS, home, env.Getenv("XDG_CONFIG_HOME"), user,
		service.Spec{Exe: exe, Args: []string{"daemon"}, Env: vars, Log: filepath.Join(dirs.DataDir, "daemon.log")})
}

// runPlanned runs each command (its program looked up in env's PATH);
// one that cannot run is printed for the user to run, with what
// follows it.
func runPlanned(ctx context.Context, env console.Env, cmds [][]string) bool {
	for i, argv := range cmds {
		argv = append([]string(nil), argv...)
		for j, a := range argv {
			argv[j] = strings.ReplaceAll(a, "$UID", strconv.Itoa(os.Getuid()))
		}
		path, err := lookPath(env, argv[0])
		var out []byte
		if err == nil {
			cmd := exec.CommandContext(ctx, path, argv[1:]...)
			cmd.Env = env.Environ
			out, err = cmd.CombinedOutput()
		}
		if err != nil {
			fmt.Fprintf(env.Stdout, "%s could not be run here (%v%s); run it yourself:\n", argv[0], err, trimOut(out))
			for _, rest := range cmds[i:] {
				fmt.Fprintf(env.Stdout, "  %s\n", strings.Join(rest, " "))
			}
			return false
		}
	}
	return true
}

func trimOut(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return ": " + s
}

// lookPath finds a program in env's PATH (not this process's).
func lookPath(env console.Env, name string) (string, error) {
	for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if runtime.GOOS == "windows" && filepath.Ext(p) == "" {
			p += ".exe"
		}
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && (runtime.GOOS == "windows" || fi.Mode()&0o111 != 0) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not in PATH", name)
}

func daemonInstallCmd(g *globals) *cobra.Command {
	var noEnable bool
	c := &cobra.Command{Use: "install", Short: "make the daemon a per-user service (systemd user unit, launchd agent, Scheduled Task at logon), so it runs when no client started it",
		Args: noArgs, RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dirs, err := resolve(env, g.configDir)
			if err != nil {
				return err
			}
			p, err := servicePlan(env, dirs)
			if err != nil {
				return err
			}
			if err := service.Write(p); err != nil {
				return fmt.Errorf("write %s: %w", p.Path, err)
			}
			fmt.Fprintf(env.Stdout, "wrote %s\n", p.Path)
			if noEnable {
				fmt.Fprintln(env.Stdout, "to put it in force:")
				for _, argv := range p.Enable {
					fmt.Fprintf(env.Stdout, "  %s\n", strings.Join(argv, " "))
				}
				return nil
			}
			enable := p.Enable
			// A daemon that runs now (started on demand) keeps its
			// place: the service takes over at the next start.
			ctx2, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if d, err := client.Dial(ctx2, dirs.Endpoint, client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-install", Version: Version}}); err == nil {
				pid := d.Init.ServerPID
				d.Close()
				if p.Kind == "systemd" {
					enable = [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", service.Name + ".service"}}
				}
				fmt.Fprintf(env.Stdout, "a daemon runs now (pid %d): the service runs the next one (zeroclaw daemon stop, then it starts at your next login, or now with your service manager)\n", pid)
			}
			if runPlanned(ctx, env, enable) {
				fmt.Fprintf(env.Stdout, "enabled the %s service %s\n", p.Kind, service.Name)
			}
			if p.Advice != "" {
				lingers := false
				if lc, err := lookPath(env, "loginctl"); err == nil {
					out, err := exec.CommandContext(ctx, lc, "show-user", env.Getenv("USER"), "-p", "Linger", "--value").Output()
					lingers = err == nil && strings.TrimSpace(string(out)) == "yes"
				}
				if !lingers {
					fmt.Fprintln(env.Stdout, p.Advice)
				}
			}
			return nil
		})}
	c.Flags().BoolVar(&noEnable, "no-enable", false, "only write the file; print the commands that put it in force")
	return c
}

func daemonUninstallCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "uninstall", Short: "stop and remove the per-user service zeroclaw daemon install made", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dirs, err := resolve(env, g.configDir)
			if err != nil {
				return err
			}
			p, err := servicePlan(env, dirs)
			if err != nil {
				return err
			}
			if !service.Installed(p) {
				return fmt.Errorf("no service is installed (no %s)", p.Path)
			}
			runPlanned(ctx, env, p.Disable)
			if err := os.Remove(p.Path); err != nil {
				return err
			}
			if p.Kind == "systemd" {
				runPlanned(ctx, env, [][]string{{"systemctl", "--user", "daemon-reload"}})
			}
			fmt.Fprintf(env.Stdout, "removed %s\n", p.Path)
			return nil
		})}
}

// serviceLine says whether the service is installed (for status).
func serviceLine(env console.Env, dirs config.Dirs) string {
	p, err := servicePlan(env, dirs)
	if err != nil {
		return "none (" + err.Error() + ")"
	}
	if !service.Installed(p) {
		return "not installed (zeroclaw daemon install)"
	}
	return fmt.Sprintf("installed (%s, %s)", p.Kind, p.Path)
}
