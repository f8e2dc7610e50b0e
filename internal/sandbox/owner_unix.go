//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// ownedByMe says whether fi is this user's.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
