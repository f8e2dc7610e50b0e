//go:build !unix

package tool

// oNonblock: opening a file never blocks here.
const oNonblock = 0
