package atomicfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// tempSuffix ends the name of every temporary file and link.
const tempSuffix = ".tmp"

// tempTries bounds the names createTemp and Symlink try: a name is taken
// only by a leftover of a crash or by a file someone planted, so the
// second try practically always succeeds.
const tempTries = 16

// tempNames yields the candidate temporary names of path: hidden files in
// path's directory, ".BASE.RANDOM.tmp". A test replaces it to plant files
// at the names it will try.
type tempNames func(path string) string

// randomTempName is the tempNames of Create, WriteFile and Symlink.
func randomTempName(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+tempSuffix)
}

// createTemp creates a new temporary file for path, mode 0600 until
// Commit sets perm on its descriptor. O_EXCL and O_NOFOLLOW make the open
// fail on any name that exists, a symlink above all (dangling or not), so
// that nothing is ever written through a link someone planted: such a name
// is skipped for the next.
func createTemp(path string, names tempNames) (*os.File, error) {
	var err error
	for range tempTries {
		var f *os.File
		f, err = os.OpenFile(names(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ELOOP) {
			return f, err
		}
	}
	return nil, err
}
