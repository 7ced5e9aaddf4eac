package wal

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

const (
	segmentExt = ".wal"
	tempExt    = ".tmp"
)

// segment is what the WAL knows about one segment file.
type segment struct {
	seq   uint64 // position in the log; consecutive across the files present
	first uint64 // index part of the name (see package doc)
	name  string // base name inside the WAL directory
	size  int64  // bytes of valid records in the file
	// maxIndex is the largest Index of an entry record (a record whose type
	// is not a header type) in the segment, 0 when it holds none.
	maxIndex uint64
	// records counts the records in the file, header records included. A
	// segment is cut only when the current one holds a record, so a cut is
	// never followed by another before something is written.
	records int
}

// segmentName is the file name of the segment with sequence number seq whose
// name records index first.
func segmentName(seq, first uint64) string {
	return fmt.Sprintf("%016x-%016x%s", seq, first, segmentExt)
}

// parseSegmentName is the inverse of segmentName. ok is false for any name
// segmentName cannot produce.
func parseSegmentName(name string) (seq, first uint64, ok bool) {
	base, found := strings.CutSuffix(name, segmentExt)
	if !found || len(base) != 33 || base[16] != '-' {
		return 0, 0, false
	}
	seq, err1 := strconv.ParseUint(base[:16], 16, 64)
	first, err2 := strconv.ParseUint(base[17:], 16, 64)
	if err1 != nil || err2 != nil || segmentName(seq, first) != name {
		return 0, 0, false
	}
	return seq, first, true
}

// listSegments returns the segments in dir ordered by sequence number, and
// the names of leftover temporary files from an interrupted segment cut.
// Files of any other name are ignored. A gap in the sequence numbers means a
// segment went missing and is reported as ErrCorrupt.
func listSegments(dir string) (segs []segment, temps []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, segmentExt+tempExt) {
			temps = append(temps, name)
			continue
		}
		if seq, first, ok := parseSegmentName(name); ok {
			segs = append(segs, segment{seq: seq, first: first, name: name})
		}
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.seq, b.seq) })
	for i := 1; i < len(segs); i++ {
		if segs[i].seq != segs[i-1].seq+1 {
			return nil, nil, fmt.Errorf("%s: segment after %s is %s, sequence numbers must be consecutive: %w",
				dir, segs[i-1].name, segs[i].name, ErrCorrupt)
		}
	}
	return segs, temps, nil
}
