package background

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe makes the pipe hold 1 MiB (the unprivileged limit by default)
// so a process that prints fast is read in large pieces.
func growPipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
	}
}
