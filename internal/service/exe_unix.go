//go:build unix

package service

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// replaceable says how someone other than this user (and root) could
// change fi, as a phrase ("every user may write (mode 1777)"), or "".
func replaceable(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	perm := fi.Mode().Perm()
	switch {
	case int(st.Uid) != os.Geteuid() && st.Uid != 0:
		return "belongs to " + userName(st.Uid)
	case perm&0o002 != 0:
		return fmt.Sprintf("every user may write (mode %s)", modeString(fi.Mode()))
	case perm&0o020 != 0 && !privateGroup(st.Gid):
		return fmt.Sprintf("the group %s may write (mode %s), not a group of yours alone", groupName(st.Gid), modeString(fi.Mode()))
	}
	return ""
}

// privateGroup says whether gid is this user's own group: their
// primary group, named as they are (the user-private-group scheme), so
// that nobody else is in it.
func privateGroup(gid uint32) bool {
	if int(gid) != os.Getegid() {
		return false
	}
	u, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	if err != nil {
		return false
	}
	g, err := user.LookupGroupId(strconv.Itoa(int(gid)))
	return err == nil && g.Name == u.Username
}

func userName(uid uint32) string {
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

func groupName(gid uint32) string {
	if g, err := user.LookupGroupId(strconv.Itoa(int(gid))); err == nil {
		return fmt.Sprintf("%s (gid %d)", g.Name, gid)
	}
	return fmt.Sprintf("gid %d", gid)
}

// modeString is a mode in octal with its sticky bit (1777).
func modeString(m os.FileMode) string {
	n := uint32(m.Perm())
	if m&os.ModeSticky != 0 {
		n |= 0o1000
	}
	return fmt.Sprintf("%04o", n)
}
