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
// with the directories this environment names. The daemon is told the
// config directory by --config-dir (so the one chosen by the flag is the
// service's too), and the data directory and socket by the variables
// that chose them, made absolute: a service starts in no particular
// directory.
func servicePlan(env console.Env, dirs config.Dirs) (service.Plan, error) {
	exe, err := os.Executable()
	if err != nil {
		return service.Plan{}, err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	vars := map[string]string{}
	if env.Getenv("ZEROCLAW_DATA_DIR") != "" {
		vars["ZEROCLAW_DATA_DIR"] = dirs.DataDir
	}
	if v := env.Getenv("ZEROCLAW_SOCKET"); v != "" {
		vars["ZEROCLAW_SOCKET"] = dirs.Endpoint
		if runtime.GOOS != "windows" {
			if abs, err := filepath.Abs(v); err == nil {
				vars["ZEROCLAW_SOCKET"] = abs
			}
		}
	}
	if v := env.Getenv("ZEROCLAW_TEST_MAIN"); v != "" {
		vars["ZEROCLAW_TEST_MAIN"] = v
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
		service.Spec{Exe: exe, Args: []string{"daemon", "--config-dir", dirs.ConfigDir}, Env: vars, Log: filepath.Join(dirs.DataDir, "daemon.log")})
}

// checkServiceExe refuses an executable the service must not run
// (service.CheckExe). The one test that installs the test binary, which
// go test runs from its temporary build directory, replaces it.
var checkServiceExe = service.CheckExe

// exeAdvice says what to do about a refused executable.
const exeAdvice = "put zeroclaw where only you (and root) can change it, and run daemon install from there: " +
	"go install ./cmd/zeroclaw (from the source), or go build -o ~/.local/bin/zeroclaw ./cmd/zeroclaw, or copy the binary: install -m 0755 zeroclaw ~/.local/bin/"

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
		Long: `zeroclaw daemon install makes the daemon a per-user service (a systemd user
unit, a launchd agent, a Scheduled Task run at logon), so it runs when no
client started it (a schedule comes due).

The service runs this zeroclaw binary as "zeroclaw daemon --config-dir DIR",
DIR being this command's config directory (--config-dir, else
$ZEROCLAW_CONFIG_DIR, else ~/.zeroclaw), with $ZEROCLAW_DATA_DIR and
$ZEROCLAW_SOCKET when they are set, made absolute.

It runs whatever sits at the binary's path at every login, so a binary
that will be gone or that another local user could replace is refused,
saying why: a build of go run (a go-build directory), a binary in the
temporary directory, or one that a directory holding it (or any above)
lets another user change: owned by another user than you and root,
writable by every user (sticky or not), or writable by a group that is not
your own private group. Put zeroclaw where only you and root can change
it (go install ./cmd/zeroclaw, or copy it to ~/.local/bin) and run daemon
install from there.`,
		Args: noArgs, RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dirs, err := resolve(env, g.configDir)
			if err != nil {
				return err
			}
			p, err := servicePlan(env, dirs)
			if err != nil {
				return err
			}
			if err := checkServiceExe(p.Exe); err != nil {
				return fmt.Errorf("%w; %s", err, exeAdvice)
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

// serviceInstalled says whether the user service that keeps a daemon
// running is installed for g's directories (false: unknown).
func serviceInstalled(env console.Env, g *globals) bool {
	dirs, err := resolve(env, g.configDir)
	if err != nil {
		return false
	}
	p, err := servicePlan(env, dirs)
	return err == nil && service.Installed(p)
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
