// Package corrupt damages one file of a node's data directory in place,
// the way a failing disk or a torn write would: it flips a bit, zeroes a
// range, or truncates the file, within the part of the file that holds
// data, and fsyncs it. The corrupt fault family runs it on the node's host
// (`chaos corrupt`), while the node is down.
//
// Every random choice comes from the request's seed, so that the same seed
// on the same files damages the same bytes.
package corrupt

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"chaos/history/faultrec"
)

// Kinds of file a request aims at.
const (
	// TargetWAL is the newest write-ahead log segment: a file named *.wal,
	// or in a directory named wal.
	TargetWAL = "wal"
	// TargetSnapshot is the newest snapshot: a file named *.snap, or in a
	// directory named snap.
	TargetSnapshot = "snapshot"
	// TargetRandom is any file, chosen at random.
	TargetRandom = "random"
)

// Ways to damage a file.
const (
	// HowFlip flips one bit of one byte.
	HowFlip = "flip"
	// HowZero overwrites a range of 1 to MaxZero bytes with zeros.
	HowZero = "zero"
	// HowTruncate cuts the file at a random length below its data's end.
	HowTruncate = "truncate"
)

// MaxZero is the longest range HowZero zeroes.
const MaxZero = 512

// RecentBytes is the window of a WAL segment's data that damage to it
// lands in: its last RecentBytes bytes of data (all of it when it holds
// less). Those are the newest records, the ones a restart replays past
// its snapshot and acts on (older ones a snapshot covers, and a system
// may never read them again). A snapshot or a random file is damaged
// anywhere within its data.
const RecentBytes = 64 << 10

// Targets and Hows are every Target and How, in the order above.
func Targets() []string { return []string{TargetWAL, TargetSnapshot, TargetRandom} }
func Hows() []string    { return []string{HowFlip, HowZero, HowTruncate} }

// Request says what to damage.
type Request struct {
	// Dir is the data directory.
	Dir string
	// Target is the kind of file (TargetWAL, TargetSnapshot, TargetRandom).
	Target string
	// How is the damage (HowFlip, HowZero, HowTruncate).
	How string
	// Seed drives every random choice.
	Seed uint64
}

// Validate says what is wrong with r, in one line, or nil.
func (r Request) Validate() error {
	switch {
	case r.Dir == "":
		return errors.New("no data directory")
	case !slices.Contains(Targets(), r.Target):
		return fmt.Errorf("target %q: want %s", r.Target, strings.Join(Targets(), ", "))
	case !slices.Contains(Hows(), r.How):
		return fmt.Errorf("how %q: want %s", r.How, strings.Join(Hows(), ", "))
	}
	return nil
}

// Result is what was damaged, as the corrupt family records it
// (faultrec.CorruptFile, where each field is described).
type Result = faultrec.CorruptFile

// file is a regular file of the data directory.
type file struct {
	rel   string
	mtime int64
	size  int64
}

// Apply damages one file of req.Dir as req says, fsyncs it, and says what
// it did. Hidden files of the fault file system (.faultfs*) are never
// chosen. It fails when no file holds data.
func Apply(req Request) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	files, err := list(req.Dir)
	if err != nil {
		return Result{}, err
	}
	rng := rand.New(rand.NewPCG(req.Seed, 0x636f7272))
	target := req.Target
	f, end, err := choose(req.Dir, candidates(files, target, rng))
	if err == nil && f.rel == "" && target != TargetRandom {
		target = TargetRandom
		f, end, err = choose(req.Dir, candidates(files, target, rng))
	}
	switch {
	case err != nil:
		return Result{}, err
	case f.rel == "":
		return Result{}, fmt.Errorf("%s: no file holds data", req.Dir)
	}
	res := Result{File: f.rel, Target: target, How: req.How, Size: f.size, DataEnd: end}
	if target != req.Target {
		res.Wanted = req.Target
	}
	return res, damage(filepath.Join(req.Dir, f.rel), &res, rng)
}

// list returns the regular files under dir.
func list(dir string) ([]file, error) {
	var out []file
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".faultfs") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, file{rel: filepath.ToSlash(rel), mtime: info.ModTime().UnixNano(), size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the data directory: %w", err)
	}
	return out, nil
}

// kindOf is the kind of file rel is: TargetWAL, TargetSnapshot or "".
func kindOf(rel string) string {
	parts := strings.Split(rel, "/")
	base, dirs := parts[len(parts)-1], parts[:len(parts)-1]
	switch {
	case strings.HasSuffix(base, ".wal") || slices.Contains(dirs, "wal"):
		return TargetWAL
	case strings.HasSuffix(base, ".snap") || slices.Contains(dirs, "snap"):
		return TargetSnapshot
	}
	return ""
}

// candidates are the files of the kind target, in the order to try them:
// the newest first (by modification time, then name) for a WAL segment or
// a snapshot; in an order drawn from rng for a random file.
func candidates(files []file, target string, rng *rand.Rand) []file {
	if target == TargetRandom {
		out := slices.Clone(files)
		slices.SortFunc(out, func(a, b file) int { return strings.Compare(a.rel, b.rel) })
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	var out []file
	for _, f := range files {
		if kindOf(f.rel) == target {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b file) int {
		if c := cmp.Compare(b.mtime, a.mtime); c != 0 {
			return c
		}
		return strings.Compare(b.rel, a.rel)
	})
	return out
}

// choose returns the first of files that holds data, with the end of its
// data; the zero file when none does.
func choose(dir string, files []file) (file, int64, error) {
	for _, f := range files {
		end, err := dataEnd(filepath.Join(dir, f.rel))
		if err != nil {
			return file{}, 0, err
		}
		if end > 0 {
			return f, end, nil
		}
	}
	return file{}, 0, nil
}

// dataEnd is the offset past the last byte of p that is not zero, read
// backwards in chunks (a preallocated segment is mostly zero tail).
func dataEnd(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 64<<10)
	for end := st.Size(); end > 0; {
		start := max(0, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read %s: %w", p, err)
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != 0 {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// damage applies res.How to p within its data (res.DataEnd; a WAL
// segment's last RecentBytes of it), fills in where, and fsyncs the file.
func damage(p string, res *Result, rng *rand.Rand) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	from := int64(0) // damage lands in [from, res.DataEnd)
	if res.Target == TargetWAL {
		from = max(0, res.DataEnd-RecentBytes)
	}
	at := func() int64 { return from + rng.Int64N(res.DataEnd-from) }
	switch res.How {
	case HowFlip:
		res.Offset, res.Bit = at(), rng.IntN(8)
		b := []byte{0}
		if _, err := f.ReadAt(b, res.Offset); err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		b[0] ^= 1 << res.Bit
		_, err = f.WriteAt(b, res.Offset)
	case HowZero:
		res.Offset = at()
		res.Length = min(res.DataEnd-res.Offset, 1+rng.Int64N(MaxZero))
		_, err = f.WriteAt(make([]byte, res.Length), res.Offset)
	case HowTruncate:
		res.Offset = at()
		res.Length = res.Size - res.Offset
		err = f.Truncate(res.Offset)
	}
	if err != nil {
		return fmt.Errorf("damage %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", p, err)
	}
	return nil
}
