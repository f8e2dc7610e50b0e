package service

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func spec(t *testing.T) Spec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Exe: exe, Args: []string{"daemon"}, Env: map[string]string{"ZEROCLAW_CONFIG_DIR": "/home/a b/.zeroclaw", "ZEROCLAW_DATA_DIR": "/d/100%"}, Log: "/d/daemon.log"}
}

// The systemd user unit is one systemd-analyze verify accepts (where
// systemd is installed), with the environment quoted as systemd reads
// it.
func TestSystemdUnit(t *testing.T) {
	p, err := For("linux", "/home/a", "", "a", spec(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != "/home/a/.config/systemd/user/zeroclaw.service" || strings.Join(p.Enable[1], " ") != "systemctl --user enable --now zeroclaw.service" {
		t.Fatalf("plan: %+v", p)
	}
	for _, want := range []string{"ExecStart=" + spec(t).Exe + " daemon\n", `Environment="ZEROCLAW_CONFIG_DIR=/home/a b/.zeroclaw"`, "Environment=ZEROCLAW_DATA_DIR=/d/100%%\n",
		"Restart=on-failure", "WantedBy=default.target"} {
		if !strings.Contains(p.Content, want) {
			t.Errorf("the unit lacks %q:\n%s", want, p.Content)
		}
	}
	if x, _ := For("linux", "/home/a", "/x/cfg", "a", spec(t)); x.Path != "/x/cfg/systemd/user/zeroclaw.service" {
		t.Errorf("XDG_CONFIG_HOME is not followed: %s", x.Path)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit's content is checked, not systemd's reading of it")
	}
	path := filepath.Join(t.TempDir(), "zeroclaw.service")
	os.WriteFile(path, []byte(p.Content), 0o600)
	if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The launchd agent is a well-formed property list (plutil -lint where
// it exists), its strings escaped.
func TestLaunchdPlist(t *testing.T) {
	s := spec(t)
	s.Args = append(s.Args, "<&>")
	p, err := For("darwin", "/Users/a", "", "a", s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != "/Users/a/Library/LaunchAgents/dev.zeroclaw.daemon.plist" {
		t.Fatalf("path %s", p.Path)
	}
	d := xml.NewDecoder(strings.NewReader(p.Content))
	d.Strict = true
	var strs []string
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not XML: %v\n%s", err, p.Content)
			}
			break
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			strs = append(strs, string(cd))
		}
	}
	if got := strings.Join(strs, "|"); !strings.Contains(got, "dev.zeroclaw.daemon|ProgramArguments|"+s.Exe+"|daemon|<&>|") || !strings.Contains(got, "/d/daemon.log") {
		t.Fatalf("the plist's strings: %s", got)
	}
	if plutil, err := exec.LookPath("plutil"); err == nil {
		path := filepath.Join(t.TempDir(), "a.plist")
		os.WriteFile(path, []byte(p.Content), 0o600)
		if out, err := exec.Command(plutil, "-lint", path).CombinedOutput(); err != nil {
			t.Fatalf("plutil -lint: %v\n%s", err, out)
		}
	}
}

// The Scheduled Task is well-formed XML that runs the daemon at the
// user's logon with the user's (least) rights.
func TestScheduledTask(t *testing.T) {
	p, err := For("windows", `C:\Users\a`, "", `PC\a`, Spec{Exe: `/c/zeroclaw.exe`, Args: []string{"daemon"}})
	if err != nil {
		t.Fatal(err)
	}
	var task struct {
		Triggers struct {
			LogonTrigger struct{ UserId string }
		}
		Principals struct {
			Principal struct{ RunLevel string }
		}
		Actions struct {
			Exec struct{ Command, Arguments string }
		}
	}
	if err := xml.Unmarshal([]byte(strings.Replace(p.Content, `encoding="UTF-8"`, "", 1)), &task); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if task.Triggers.LogonTrigger.UserId != `PC\a` || task.Principals.Principal.RunLevel != "LeastPrivilege" || task.Actions.Exec.Command != `/c/zeroclaw.exe` || task.Actions.Exec.Arguments != "daemon" {
		t.Fatalf("the task: %+v", task)
	}
	if strings.Join(p.Enable[0], " ") != `schtasks /Create /TN zeroclaw /XML `+p.Path+` /F` {
		t.Fatalf("enable: %v", p.Enable)
	}
	if _, err := For("plan9", "/", "", "a", Spec{Exe: "/z"}); err == nil {
		t.Fatal("a system without a known service manager was planned for")
	}
}
