//go:build !unix

package daemon

// privateUmask: there is no umask here; files are private by their ACLs.
func privateUmask() int { return -1 }
