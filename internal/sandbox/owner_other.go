//go:build !unix

package sandbox

import "os"

// ownedByMe says whether fi is this user's: not known here.
func ownedByMe(os.FileInfo) bool { return true }
