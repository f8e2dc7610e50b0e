//go:build !linux && !darwin

package tool

import "errors"

var errNoGroups = errors.New("no process groups on this system")

// startTime is unknown here: commands are not recorded, and so never
// killed by mistake.
func startTime(pid int) (uint64, bool) { return 0, false }

func killStale(pgid int) error { return errNoGroups }
