//go:build windows

package service

import "os"

// replaceable is "" on Windows: its ACLs are not read (the temporary
// directory and go-build checks of CheckExe still apply).
func replaceable(os.FileInfo) string { return "" }
