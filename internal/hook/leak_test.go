package hook

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine behind (a stream, a server, a process's
// reader).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
