// Package sandbox confines the commands the agent runs: a small shim (the
// zeroclaw binary itself, run with ShimArg) applies the policy to itself
// and runs the command under it, so the command and everything it starts
// inherit it; it also makes them die with the daemon. On Linux the policy
// is enforced by Landlock (no root, no setuid helper).
package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Modes of [sandbox] mode.
const (
	ModeWorkspaceWrite = "workspace-write"
	ModeReadOnly       = "read-only"
	ModeOff            = "off"
)

// Modes lists the modes.
var Modes = []string{ModeWorkspaceWrite, ModeReadOnly, ModeOff}

// ShimArg, as the first argument of the zeroclaw binary, runs the shim.
const ShimArg = "__zeroclaw-sandbox"

// Policy is what a sandboxed command may do: read the whole file system,
// write only Writable (and the devices a shell needs), and, without
// Network, no TCP connect or bind.
type Policy struct {
	Writable []string `json:"writable"`
	Network  bool     `json:"network"`
	// Parent is the daemon's pid: the shim runs nothing once it is gone.
	Parent int `json:"parent"`
	// Unconfined runs the command with no policy, only supervised: it
	// and all it starts end with the daemon (a stdio MCP server).
	Unconfined bool `json:"unconfined,omitempty"`
	// Hide are directories the command must not reach (the daemon's
	// data, runtime and config directories: its socket, its store, its
	// tokens): where the shim can give the command namespaces of its own
	// (Linux, user namespaces allowed: Isolation), each is an empty
	// directory to the command, and the command's processes can neither
	// see nor signal anything outside their own tree.
	Hide []string `json:"hide,omitempty"`
	// TempDir, when set, is the command's own temp dir: the shim makes
	// it (the user's alone, 0700, as is the directory above it) and
	// gives it as TMPDIR; it must be among Writable.
	TempDir string `json:"tempDir,omitempty"`
	// Init marks the shim's second stage, and Exec its last (internal:
	// the first stage sets Init when it starts the command in
	// namespaces of its own; the init sets Exec for the process that
	// confines itself and becomes the command).
	Init bool `json:"init,omitempty"`
	Exec bool `json:"exec,omitempty"`
}

// Supervise is the argv that runs argv supervised, unconfined but for
// hide (Policy.Hide), through the shim exe; argv itself where the shim
// cannot supervise (Supervises).
func Supervise(exe string, argv []string, hide ...string) []string {
	if !Supervises() || exe == "" {
		return argv
	}
	return Wrap(exe, Policy{Unconfined: true, Hide: hide}, argv)
}

// OrphanGrace is how long what a command started has, once the daemon
// is gone, between being told to stop (SIGTERM, all of it) and being
// killed: no one waits for it any more.
const OrphanGrace = 300 * time.Millisecond

// Wrap is the argv that runs argv under p through the shim exe.
func Wrap(exe string, p Policy, argv []string) []string {
	if p.Parent == 0 {
		p.Parent = os.Getpid()
	}
	spec, _ := json.Marshal(p)
	return append([]string{exe, ShimArg, string(spec), "--"}, argv...)
}

// StopGrace is how long a confined command has to end after the shim is
// told to stop (SIGTERM, SIGINT, SIGHUP) before everything it started is
// killed: the shell tool's KillGrace, between its SIGTERM and SIGKILL.
const StopGrace = 2 * time.Second

// IsShim says whether args (os.Args) run the shim.
func IsShim(args []string) bool { return len(args) > 1 && args[1] == ShimArg }

// Main runs the shim (os.Args as args); it never returns.
func Main(args []string) {
	if len(args) < 5 || args[3] != "--" {
		fail("zeroclaw sandbox: bad arguments")
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[2]), &p); err != nil {
		fail("zeroclaw sandbox: bad policy: " + err.Error())
	}
	if p.TempDir != "" && !p.Init && !p.Exec {
		if err := privateDir(p.TempDir); err != nil {
			fail("zeroclaw sandbox: the command's temp dir: " + err.Error())
		}
		os.Setenv("TMPDIR", p.TempDir)
	}
	os.Exit(run(p, args[4:]))
}

// privateDir makes dir and the directory above it, each a real
// directory of this user that no one else may enter (one planted by
// someone else, or a symbolic link, is refused).
func privateDir(dir string) error {
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			return err
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
			return fmt.Errorf("%s is not a directory of this user's alone", d)
		}
	}
	return nil
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(126)
}

// Support says what enforces a sandbox here ("landlock", or "none" with
// the reason) and whether commands can run without network.
type Support struct {
	EnforcedBy string
	Reason     string
	// NetworkRules: TCP connect and bind can be denied.
	NetworkRules bool
}

// Available says what this machine can enforce.
func Available() Support { return available() }

// NamespacesEnv set to "off" in the daemon's environment makes the
// shim confine commands with Landlock alone, as where the system allows
// no user namespaces (for a system where they misbehave, and for the
// tests of that case).
const NamespacesEnv = "ZEROCLAW_SANDBOX_NAMESPACES"

// Isolation says whether the shim runs each command in namespaces of
// its own (user, pid, mount; network when the policy has none): its
// tree held by an init of its own that nothing in it can kill, Hide
// made empty, no network at all without Network. "" when it does, else
// why not (the shim then confines with Landlock alone, and the daemon
// tells a command's connection by its process's ancestry).
func Isolation() string { return isolation() }

// ShimMain runs the shim when os.Args asks for it, and otherwise returns:
// the first line of a test binary's TestMain, so that a daemon run in a
// test can confine its commands with the test binary as the shim.
func ShimMain() {
	if IsShim(os.Args) {
		Main(os.Args)
	}
}

// holdsAny says whether dir is, or holds, one of paths.
func holdsAny(dir string, paths []string) bool {
	dir = filepath.Clean(dir)
	for _, p := range paths {
		p = filepath.Clean(p)
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
