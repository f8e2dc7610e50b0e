package tool

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Reaper keeps a record of the process groups of running commands, one
// file each in Dir ("<pgid>" holding the group leader's start time), so
// that the groups of a daemon that died (kill -9, a crash) are found and
// killed by the next daemon instead of running on unseen. The start time
// tells a recorded group from a later process that reuses its id.
type Reaper struct {
	Dir string
	Log *slog.Logger
}

// Track records a running command's group; the function it returns
// removes the record once the group is gone.
func (r *Reaper) Track(pgid int) func() {
	start, ok := startTime(pgid)
	if !ok {
		return func() {}
	}
	path := filepath.Join(r.Dir, strconv.Itoa(pgid))
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return func() {}
	}
	if err := os.WriteFile(path, []byte(strconv.FormatUint(start, 10)+"\n"), 0o600); err != nil {
		return func() {}
	}
	return func() { os.Remove(path) }
}

// Reap kills every recorded group whose leader is still the process that
// was recorded, and forgets them all. It returns how many it killed.
func (r *Reaper) Reap() int {
	ents, err := os.ReadDir(r.Dir)
	if err != nil {
		return 0
	}
	killed := 0
	for _, e := range ents {
		path := filepath.Join(r.Dir, e.Name())
		pgid, err := strconv.Atoi(e.Name())
		b, rerr := os.ReadFile(path)
		os.Remove(path)
		if err != nil || rerr != nil || pgid <= 1 {
			continue
		}
		want, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			continue
		}
		if got, ok := startTime(pgid); ok && got == want {
			if killStale(pgid) == nil {
				killed++
				if r.Log != nil {
					r.Log.Warn("killed a command left running by a daemon that died", "pgid", pgid)
				}
			}
		}
	}
	return killed
}
