package snap

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strconv"
	"strings"
)

// A snapshot file is named "<term>-<index>.snap" with both numbers as 16
// zero-padded hex digits, and holds
//
//	[u32 crc32c][data]
//
// in little endian, where the CRC (Castagnoli) covers term and index as
// little-endian u64s followed by data, so a file renamed to another
// snapshot's name fails the check too.
const (
	snapExt    = ".snap"
	tempSuffix = ".tmp"
	crcBytes   = 4
)

var errChecksum = errors.New("checksum mismatch")

// castagnoli is the CRC32C table; it is never written after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// file is a snapshot file found in the directory.
type file struct {
	term, index uint64
	name        string
}

func fileName(term, index uint64) string {
	return fmt.Sprintf("%016x-%016x%s", term, index, snapExt)
}

// parseFileName is the inverse of fileName; ok is false for other names.
func parseFileName(name string) (f file, ok bool) {
	base, found := strings.CutSuffix(name, snapExt)
	if !found || len(base) != 33 || base[16] != '-' {
		return file{}, false
	}
	term, err1 := strconv.ParseUint(base[:16], 16, 64)
	index, err2 := strconv.ParseUint(base[17:], 16, 64)
	if err1 != nil || err2 != nil || fileName(term, index) != name {
		return file{}, false
	}
	return file{term: term, index: index, name: name}, true
}

// listFiles returns the snapshot files in dir, newest (highest index, then
// highest term) first, and the names of temporary files left by a crash
// during Save.
func listFiles(dir string) (files []file, temps []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list snapshots in %s: %w", dir, err)
	}
	for _, e := range entries {
		if f, ok := parseFileName(e.Name()); ok {
			files = append(files, f)
		} else if strings.Contains(e.Name(), snapExt+".") && strings.HasSuffix(e.Name(), tempSuffix) {
			temps = append(temps, e.Name())
		}
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(cmp.Compare(b.index, a.index), cmp.Compare(b.term, a.term))
	})
	return files, temps, nil
}

func checksum(term, index uint64, data []byte) uint32 {
	var ti [16]byte
	binary.LittleEndian.PutUint64(ti[:], term)
	binary.LittleEndian.PutUint64(ti[8:], index)
	return crc32.Update(crc32.Checksum(ti[:], castagnoli), castagnoli, data)
}

// encode returns the file contents for a snapshot.
func encode(term, index uint64, data []byte) []byte {
	out := make([]byte, crcBytes, crcBytes+len(data))
	binary.LittleEndian.PutUint32(out, checksum(term, index, data))
	return append(out, data...)
}

// decode verifies the contents of the file f and returns its data.
func decode(f file, contents []byte) ([]byte, error) {
	if len(contents) < crcBytes {
		return nil, fmt.Errorf("%d bytes, shorter than the checksum", len(contents))
	}
	data := contents[crcBytes:]
	if binary.LittleEndian.Uint32(contents) != checksum(f.term, f.index, data) {
		return nil, errChecksum
	}
	return data, nil
}
