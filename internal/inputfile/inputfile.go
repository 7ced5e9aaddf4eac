// Package inputfile opens the files chaos reads but did not just write
// itself: histories, event logs, run records, description and campaign
// files, other programs' logs. Any of them may be a device, a pipe, a
// symlink to one (/dev/zero never ends, a FIFO blocks) or a huge sparse
// file, so every reader here takes only regular files, opened without
// blocking, and ReadFile refuses a file over the bound its caller gives
// before reading a byte of it. Readers that stream (history.jsonl,
// events.jsonl) bound their lines instead of the size.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error (an *fs.PathError) for a path that
// is not a regular file (after symlinks are followed).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by ReadFile's error (an *fs.PathError) for a
// file over its bound.
var ErrTooLarge = errors.New("too large")

// Open opens path for reading when it is a regular file. O_NONBLOCK keeps
// the open of a FIFO from waiting for a writer; the type is checked on the
// open file, so what is checked is what is read. Errors name path.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("it is %s, %w: give a file", kind(info.Mode()), ErrNotRegular)}
	}
	return f, nil
}

// ReadFile reads the regular file path whole when it holds at most limit
// bytes; a larger one is refused before anything is read, with an error
// naming its size and the bound. A file that grows while it is read is
// cut at limit+1 bytes and refused too.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() > limit {
		return nil, tooLarge(path, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, int64(len(data)), limit)
	}
	return data, nil
}

func tooLarge(path string, size, limit int64) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("it is %s, %w: this file may hold at most %s", Size(size), ErrTooLarge, Size(limit))}
}

// Size is n bytes for a person: "512 B", "64 MiB", "2.0 GiB".
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %ciB", int64(v), "KMGT"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[exp])
}

// kind names the type of a file that is not regular.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "of an unknown type"
}
