//go:build !linux

package background

import "os"

// growPipe: the pipe keeps the system's size.
func growPipe(*os.File) {}
