package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// The Seatbelt profile (macOS) is built here from the same policy as
// Landlock's; it is enforced only on a Mac, so what is checked here is
// the profile itself: writes denied but below the writable dirs (each as
// given and as its real path) and the shell's devices, the network denied
// when asked, and no path ever inside the profile's text.
func TestSeatbeltProfile(t *testing.T) {
	real := func(p string) (string, error) {
		switch p {
		case "/tmp":
			return "/private/tmp", nil
		case "/var/folders/x/T":
			return "/private/var/folders/x/T", nil
		}
		return "", errors.New("no such dir")
	}
	evil := `/work/a") (allow file-write* (subpath "/x`
	profile, params := Seatbelt(Policy{Writable: []string{"/work/proj", "/tmp", "/var/folders/x/T/", "relative/dir", evil, "/tmp"}}, real)
	want := []string{"W0=/work/proj", "W1=/tmp", "W2=/private/tmp", "W3=/var/folders/x/T", "W4=/private/var/folders/x/T", "W5=" + evil}
	if strings.Join(params, "\n") != strings.Join(want, "\n") {
		t.Fatalf("params:\n%s", strings.Join(params, "\n"))
	}
	for _, w := range []string{"(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n", `(literal "/dev/null")`,
		`(regex #"^/dev/ttys[0-9]+$")`, `(subpath (param "W0"))`, `(subpath (param "W5"))`,
		"(deny network-outbound (remote ip \"*:*\"))\n(deny network-bind (local ip \"*:*\"))\n"} {
		if !strings.Contains(profile, w) {
			t.Errorf("the profile lacks %q:\n%s", w, profile)
		}
	}
	if strings.Contains(profile, "/work") || strings.Contains(profile, "/tmp") || strings.Contains(profile, "relative") {
		t.Errorf("a path is in the profile's text:\n%s", profile)
	}
	// The deny comes before the allows: Seatbelt's last matching rule
	// wins.
	if strings.Index(profile, "(deny file-write*)") > strings.Index(profile, "(allow file-write*") {
		t.Errorf("the order of the rules:\n%s", profile)
	}
	if open, _ := Seatbelt(Policy{Network: true}, real); strings.Contains(open, "network") {
		t.Errorf("network = true denies it:\n%s", open)
	}
}
