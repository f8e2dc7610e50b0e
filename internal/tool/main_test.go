package tool

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

// The test binary is also the sandbox's shim, as the zeroclaw binary is.
func TestMain(m *testing.M) {
	if sandbox.IsShim(os.Args) {
		sandbox.Main(os.Args)
	}
	goleak.VerifyTestMain(m)
}
