//go:build !unix

package attach

const (
	oNonblock = 0
	oNofollow = 0
)

func isLoop(err error) bool { return false }
