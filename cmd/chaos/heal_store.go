package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// storeTrust decides whether heal may believe a stored run: every file and
// directory it reads there, and every directory above them, must belong to
// a trusted user and be writable by no one else. Otherwise another user
// could have planted the record that names the hosts heal logs in to.
type storeTrust struct {
	uids   []uint32 // trusted owners: root, this process's, and SUDO_UID under sudo
	whoami string   // the trusted owners in words, for messages
}

// newStoreTrust trusts root and the effective user; when that is root and
// sudoUID (the SUDO_UID sudo sets) names a user, that user too: under
// sudo, a store written by the invoking user's own chaos run is theirs.
func newStoreTrust(euid int, sudoUID string) storeTrust {
	t := storeTrust{uids: []uint32{0}, whoami: "root"}
	if euid != 0 {
		t.uids = append(t.uids, uint32(euid))
		t.whoami = fmt.Sprintf("uid %d or root", euid)
		return t
	}
	if u, err := strconv.ParseUint(sudoUID, 10, 32); err == nil && u != 0 {
		t.uids = append(t.uids, uint32(u))
		t.whoami = fmt.Sprintf("root or uid %d (SUDO_UID)", u)
	}
	return t
}

// checkRun refuses, in one line, a run of store whose record heal must not
// trust: the store, the latest link, its target and test.json are checked,
// each with every directory above it.
func (t storeTrust) checkRun(store string) error {
	link := filepath.Join(store, "latest")
	if err := t.checkChain(store); err != nil {
		return err
	}
	st, err := os.Lstat(link)
	if err != nil {
		return nil // no run: latestRun says so
	}
	if err := t.owned(link, st); err != nil {
		return err
	}
	if err := t.checkChain(filepath.Join(link, "test.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// checkChain checks path, symbolic links resolved, and each directory above
// it up to the root. A world-writable directory with the sticky bit (/tmp)
// is accepted above the path: others cannot rename or remove what is in it.
func (t storeTrust) checkChain(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	for p := real; ; p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if err := t.owned(p, st); err != nil {
			return err
		}
		sticky := st.IsDir() && st.Mode()&fs.ModeSticky != 0 && p != real
		if st.Mode().Perm()&0o022 != 0 && !sticky {
			return usageErrorf("not healing the run in the store: %s is writable by group or others (mode %04o), so its record may not be yours: "+
				"fix it (chmod go-w %s) or give --db and the hosts instead", p, st.Mode().Perm(), p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
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
