//go:build unix

package tool

import "syscall"

const oNonblock = syscall.O_NONBLOCK
