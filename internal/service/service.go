// Package service writes what makes the daemon a per-user service, so
// it is there when nobody started it (a schedule comes due): a systemd
// user unit on Linux, a launchd agent on macOS, a Scheduled Task run at
// logon on Windows. It only writes files and says which commands put
// them in force; the caller runs those (or prints them, where the
// service manager cannot be reached).
package service

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Name is the service's name: the unit zeroclaw.service, the launchd
// label dev.zeroclaw.daemon, the task zeroclaw.
const (
	Name  = "zeroclaw"
	Label = "dev.zeroclaw.daemon"
)

// Spec is what the service runs.
type Spec struct {
	// Exe is the zeroclaw executable (absolute); Args follow it
	// ("daemon").
	Exe  string
	Args []string
	// Env is set for it (ZEROCLAW_CONFIG_DIR and the like: what this
	// user runs zeroclaw with).
	Env map[string]string
	// Log is where a launchd agent writes its output (systemd keeps its
	// journal; a Task writes none).
	Log string
}

// Plan is one system's service: the file to write, its content, and
// the commands that enable (and start) it, or stop and disable it.
type Plan struct {
	Kind string // "systemd", "launchd" or "task"
	// Exe is what the service runs (the Spec's).
	Exe     string
	Path    string
	Content string
	Enable  [][]string
	Disable [][]string
	// Advice is said after enabling (a systemd user unit runs only
	// while the user is logged in unless lingering is on).
	Advice string
}

// For is the plan on goos, under home (and, on Linux, XDG_CONFIG_HOME
// configHome when set) for user user.
func For(goos, home, configHome, user string, s Spec) (Plan, error) {
	if !filepath.IsAbs(s.Exe) {
		return Plan{}, fmt.Errorf("the executable %q is not an absolute path", s.Exe)
	}
	switch goos {
	case "linux", "freebsd", "openbsd", "netbsd":
		if configHome == "" {
			configHome = filepath.Join(home, ".config")
		}
		unit := Name + ".service"
		return Plan{Kind: "systemd", Exe: s.Exe, Path: filepath.Join(configHome, "systemd", "user", unit), Content: Unit(s),
			Enable:  [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", unit}},
			Disable: [][]string{{"systemctl", "--user", "disable", "--now", unit}},
			Advice:  "A user unit runs while you are logged in; to have it run from boot without a login: loginctl enable-linger " + user}, nil
	case "darwin":
		path := filepath.Join(home, "Library", "LaunchAgents", Label+".plist")
		return Plan{Kind: "launchd", Exe: s.Exe, Path: path, Content: Plist(s),
			Enable:  [][]string{{"launchctl", "bootstrap", "gui/$UID", path}},
			Disable: [][]string{{"launchctl", "bootout", "gui/$UID/" + Label}}}, nil
	case "windows":
		path := filepath.Join(home, "AppData", "Local", "zeroclaw", Name+"-task.xml")
		return Plan{Kind: "task", Exe: s.Exe, Path: path, Content: TaskXML(s, user),
			Enable:  [][]string{{"schtasks", "/Create", "/TN", Name, "/XML", path, "/F"}, {"schtasks", "/Run", "/TN", Name}},
			Disable: [][]string{{"schtasks", "/End", "/TN", Name}, {"schtasks", "/Delete", "/TN", Name, "/F"}}}, nil
	}
	return Plan{}, fmt.Errorf("no service manager known for %s: run zeroclaw daemon from your own start-up", goos)
}

// Unit is a systemd user unit that runs s, restarted when it fails.
func Unit(s Spec) string {
	var b strings.Builder
	b.WriteString("[Unit]\nDescription=zeroclaw agent daemon\n\n[Service]\nType=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s\n", systemdCommand(s.Exe, s.Args))
	for _, k := range keys(s.Env) {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(k+"="+s.Env[k]))
	}
	b.WriteString("Restart=on-failure\nRestartSec=2\n\n[Install]\nWantedBy=default.target\n")
	return b.String()
}

// systemdCommand is a command line as systemd reads one: each word
// quoted when it must be, % and $ kept literal.
func systemdCommand(exe string, args []string) string {
	words := []string{systemdQuote(exe)}
	for _, a := range args {
		words = append(words, systemdQuote(a))
	}
	return strings.Join(words, " ")
}

func systemdQuote(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	s = strings.ReplaceAll(s, "$", "$$")
	if s != "" && !strings.ContainsAny(s, " \t\"'\\") {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`
}

// Plist is a launchd agent that runs s at login and again when it
// exits with a failure.
func Plist(s Spec) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + Label + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, a := range append([]string{s.Exe}, s.Args...) {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", html.EscapeString(a))
	}
	b.WriteString("\t</array>\n")
	if len(s.Env) > 0 {
		b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict>\n")
		for _, k := range keys(s.Env) {
			fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", html.EscapeString(k), html.EscapeString(s.Env[k]))
		}
		b.WriteString("\t</dict>\n")
	}
	b.WriteString("\t<key>RunAtLoad</key>\n\t<true/>\n\t<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	if s.Log != "" {
		fmt.Fprintf(&b, "\t<key>StandardErrorPath</key>\n\t<string>%s</string>\n", html.EscapeString(s.Log))
	}
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

// TaskXML is a Scheduled Task that runs s at user's logon, with the
// user's rights, restarted when it fails.
func TaskXML(s Spec, user string) string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = windowsQuote(a)
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo><Description>zeroclaw agent daemon</Description></RegistrationInfo>
  <Triggers><LogonTrigger><Enabled>true</Enabled><UserId>` + html.EscapeString(user) + `</UserId></LogonTrigger></Triggers>
  <Principals><Principal id="Author"><UserId>` + html.EscapeString(user) + `</UserId><LogonType>InteractiveToken</LogonType><RunLevel>LeastPrivilege</RunLevel></Principal></Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <RestartOnFailure><Interval>PT1M</Interval><Count>3</Count></RestartOnFailure>
  </Settings>
  <Actions Context="Author"><Exec><Command>` + html.EscapeString(s.Exe) + `</Command><Arguments>` + html.EscapeString(strings.Join(args, " ")) + `</Arguments></Exec></Actions>
</Task>
`
}

func windowsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Write writes p's file (its directory made; 0600: it may name the
// config's place).
func Write(p Plan) error {
	if err := os.MkdirAll(filepath.Dir(p.Path), 0o700); err != nil {
		return err
	}
	tmp := p.Path + ".tmp"
	if err := os.WriteFile(tmp, []byte(p.Content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.Path)
}

// Installed says whether p's file is there.
func Installed(p Plan) bool {
	_, err := os.Stat(p.Path)
	return err == nil
}
