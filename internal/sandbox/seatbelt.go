package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Seatbelt is p as a profile for macOS's sandbox-exec (Seatbelt), with
// the -D parameters it reads: everything is allowed but writing files,
// which is allowed only below p.Writable (each as given and as its real
// path: Seatbelt sees /private/tmp for /tmp) and to the devices a shell
// writes to; without p.Network, IP connections out and binds are denied.
// The paths travel as parameters, never inside the profile's text, so no
// path can change the profile. real resolves a path's symlinks (nil:
// filepath.EvalSymlinks).
func Seatbelt(p Policy, real func(string) (string, error)) (profile string, params []string) {
	if real == nil {
		real = filepath.EvalSymlinks
	}
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n")
	for _, d := range seatbeltDevices {
		fmt.Fprintf(&b, "  (literal %q)\n", d)
	}
	b.WriteString("  (regex #\"^/dev/ttys[0-9]+$\")\n  (regex #\"^/dev/fd/[0-9]+$\")\n")
	seen := map[string]bool{}
	add := func(dir string) {
		if dir == "" || !filepath.IsAbs(dir) || seen[dir] {
			return
		}
		seen[dir] = true
		name := fmt.Sprintf("W%d", len(params))
		params = append(params, name+"="+dir)
		fmt.Fprintf(&b, "  (subpath (param %q))\n", name)
	}
	for _, w := range p.Writable {
		w = filepath.Clean(w)
		add(w)
		if r, err := real(w); err == nil {
			add(r)
		}
	}
	b.WriteString(")\n")
	if !p.Network {
		b.WriteString("(deny network-outbound (remote ip \"*:*\"))\n(deny network-bind (local ip \"*:*\"))\n")
	}
	return b.String(), params
}

// seatbeltDevices are the device files a shell writes to on macOS.
var seatbeltDevices = []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/ptmx", "/dev/random", "/dev/urandom", "/dev/dtracehelper"}
