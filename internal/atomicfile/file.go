package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is one replacement of a path's content in progress (steps 1 to 4 of
// the package doc). Write the content to it, then call Commit to put it in
// place or Abort to drop it. A File is not safe for concurrent use.
type File struct {
	tmp  *os.File
	path string
	perm fs.FileMode
	done bool // Commit or Abort has run
	// syncDir is SyncDir; a test replaces it to fail step 4.
	syncDir func(dir string) error
}

// Create starts replacing path's content: it creates a new temporary file
// of a name of its own in path's directory (the package doc) for writing.
// path itself is not touched until Commit.
func Create(path string, perm fs.FileMode) (*File, error) {
	return create(path, perm, randomTempName)
}

func create(path string, perm fs.FileMode, names tempNames) (*File, error) {
	f, err := createTemp(path, names)
	if err != nil {
		return nil, err
	}
	return &File{tmp: f, path: path, perm: perm.Perm(), syncDir: SyncDir}, nil
}

// Write appends p to the new content.
func (f *File) Write(p []byte) (int, error) { return f.tmp.Write(p) }

// Commit puts the new content in place: it sets the permission bits (on the
// open file, never by name), fsyncs
// and closes the temporary file, renames it over path and fsyncs the
// directory. On an error before the rename the temporary file is removed and
// path is untouched; an error from the directory fsync means path holds the
// new content, not yet durably. Commit after Commit or Abort does nothing.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.tmp.Chmod(f.perm)
	if err == nil {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		return err
	}
	return f.syncDir(filepath.Dir(f.path))
}

// Abort drops the new content: it closes and removes the temporary file and
// leaves path untouched. Abort after Commit or Abort does nothing, so it can
// be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.tmp.Close()
	_ = os.Remove(f.tmp.Name())
}

// WriteFile replaces path's content with data and its permission bits with
// perm, as the package doc describes.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path's content with what write writes, for content
// that is streamed rather than held in memory. If write returns an error,
// path is untouched, the temporary file is removed and that error is
// returned as it is.
func WriteFunc(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
