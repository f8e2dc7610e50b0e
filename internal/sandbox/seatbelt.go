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
	// What the command must not reach (the daemon's directories, its
	// socket): neither read, written nor connected to; a later rule
	// wins over the allows above.
	hidden := map[string]bool{}
	for _, h := range p.Hide {
		if h == "" || !filepath.IsAbs(h) || holdsAny(h, p.Writable) {
			continue
		}
		for _, d := range []string{filepath.Clean(h), ""} {
			if d == "" {
				r, err := real(h)
				if err != nil {
					continue
				}
				d = r
			}
			if hidden[d] {
				continue
			}
			hidden[d] = true
			name := fmt.Sprintf("H%d", len(params))
			params = append(params, name+"="+d)
			fmt.Fprintf(&b, "(deny file-read* file-write* (subpath (param %q)))\n(deny network-outbound (remote unix-socket (subpath (param %q))))\n", name, name)
		}
	}
	return b.String(), params
}

// seatbeltDevices are the device files a shell writes to on macOS.
var seatbeltDevices = []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/ptmx", "/dev/random", "/dev/urandom", "/dev/dtracehelper"}
