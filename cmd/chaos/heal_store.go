package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// storeTrust decides whether heal may believe a stored run: every file and
// directory it reads there, and every directory above them, must belong to
// a trusted user and be writable by no one else. Otherwise another user
// could have planted the record that names the hosts heal logs in to.
type storeTrust struct {
	uids   []uint32 // trusted owners: root, this process's, and SUDO_UID under sudo
	whoami string   // the trusted owners in words, for messages
	// groups are the trusted users' private groups (a group of a user's
	// own name that is their primary group, as Debian makes one per
	// user): writable by such a group is writable by its user alone.
	groups map[uint32]bool
}

// newStoreTrust trusts root and the effective user; when that is root and
// sudoUID (the SUDO_UID sudo sets) names a user, that user too: under
// sudo, a store written by the invoking user's own chaos run is theirs.
func newStoreTrust(euid int, sudoUID string) storeTrust {
	t := storeTrust{uids: []uint32{0}, whoami: "root", groups: map[uint32]bool{}}
	switch u, err := strconv.ParseUint(sudoUID, 10, 32); {
	case euid != 0:
		t.uids = append(t.uids, uint32(euid))
		t.whoami = fmt.Sprintf("uid %d or root", euid)
	case err == nil && u != 0:
		t.uids = append(t.uids, uint32(u))
		t.whoami = fmt.Sprintf("root or uid %d (SUDO_UID)", u)
	}
	for _, uid := range t.uids {
		if gid, ok := privateGroup(uid); ok {
			t.groups[gid] = true
		}
	}
	return t
}

// privateGroup is uid's primary group when it bears the user's own name
// (a user private group), and false otherwise or when either is unknown.
func privateGroup(uid uint32) (uint32, bool) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return 0, false
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil || g.Name != u.Username {
		return 0, false
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	return uint32(gid), err == nil
}

// checkRun finds the newest run of store and returns the real path of its
// directory, once the store, the latest link, the run and its test.json,
// each with every directory above it, are found trustworthy; "" when there
// is no run to read (no store, no latest link, no test.json), which
// latestRun reports. Read the run from the path returned, not through the
// links again: every directory on it is the trusted users' alone, so what
// it names cannot change under heal.
func (t storeTrust) checkRun(store string) (string, error) {
	if _, err := t.checkChain(store); err != nil {
		return "", ignoreMissing(err)
	}
	link := filepath.Join(store, "latest")
	st, err := os.Lstat(link)
	if err != nil {
		return "", nil
	}
	if err := t.owned(link, st); err != nil {
		return "", err
	}
	real, err := t.checkChain(filepath.Join(link, "test.json"))
	if err != nil {
		return "", ignoreMissing(err)
	}
	return filepath.Dir(real), nil
}

// ignoreMissing is nil for a path that does not exist, else err.
func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// checkChain checks path and returns its real path: every link on the way
// to it must belong to a trusted user, and the real path and each directory
// above it up to the root must belong to one and be writable by no one
// else. A world-writable directory with the sticky bit (/tmp) is accepted
// above the path: others cannot rename or remove what is in it.
func (t storeTrust) checkChain(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if err := t.linksOwned(abs); err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	for p := real; ; p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		if err := t.owned(p, st); err != nil {
			return "", err
		}
		if err := t.notWritable(p, st, p == real); err != nil {
			return "", err
		}
		if p == filepath.Dir(p) {
			return real, nil
		}
	}
}

// linksOwned refuses a symbolic link among the leading parts of abs (as
// given, before any is resolved) that a trusted user does not own.
func (t storeTrust) linksOwned(abs string) error {
	p := string(filepath.Separator)
	for _, part := range strings.Split(abs, string(filepath.Separator)) {
		if part == "" {
			continue
		}
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if err != nil {
			return nil // missing: EvalSymlinks says so
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			if err := t.owned(p, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// notWritable refuses p when others may write it: world-writable (but for
// a sticky directory above the path itself), or group-writable by a group
// that is not a trusted user's private group.
func (t storeTrust) notWritable(p string, st fs.FileInfo, isPath bool) error {
	perm := st.Mode().Perm()
	sticky := st.IsDir() && st.Mode()&fs.ModeSticky != 0 && !isPath
	sys, _ := st.Sys().(*syscall.Stat_t)
	groupOK := sys != nil && t.groups[sys.Gid]
	if (perm&0o002 == 0 || sticky) && (perm&0o020 == 0 || groupOK || sticky) {
		return nil
	}
	return usageErrorf("not healing the run in the store: %s is writable by group or others (mode %04o), so its record may not be yours: "+
		"fix it (chmod go-w %s) or give --db and the hosts instead", p, perm, p)
}

// owned refuses path unless a trusted user owns it.
func (t storeTrust) owned(path string, st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return usageErrorf("not healing the run in the store: cannot tell who owns %s; give --db and the hosts instead", path)
	}
	for _, u := range t.uids {
		if sys.Uid == u {
			return nil
		}
	}
	return usageErrorf("not healing the run in the store: %s belongs to uid %d, not to %s, so its record may not be yours: "+
		"give --db and the hosts instead", path, sys.Uid, t.whoami)
}
