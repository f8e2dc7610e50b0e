package goals

import "time"

// SetClock makes now the goals' clock (a test moves time by hand).
func SetClock(gs *Goals, now func() time.Time) { gs.now = now }
