package vdsoclock

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// VDSO is a process's vDSO: where it is mapped, its image, and the
// entries of the clock functions it exports.
type VDSO struct {
	// Start and End are the mapping's addresses in the process.
	Start, End uint64
	// Image is the mapping's bytes as the process has them.
	Image []byte
	// Funcs are the clock functions' offsets in Image, by entry of code
	// (entryClockGettime, ...): only those the vDSO exports.
	Funcs map[int]uint64
}

// vdsoNames are the exported names of the clock functions, by the entry
// of code that replaces each (the kernel's __vdso_ names; clock_gettime
// and the others are weak aliases at the same offsets).
var vdsoNames = map[int]string{
	entryClockGettime: "__vdso_clock_gettime",
	entryGettimeofday: "__vdso_gettimeofday",
	entryTime:         "__vdso_time",
}

// mapping is one line of /proc/PID/maps.
type mapping struct {
	start, end uint64
	perms      string
	name       string
}

// readMaps parses /proc/PID/maps.
func readMaps(pid int) ([]mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m, err := parseMapping(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/maps: %w", pid, err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// parseMapping parses a maps line: "start-end perms offset dev inode name".
func parseMapping(line string) (mapping, error) {
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return mapping{}, fmt.Errorf("line %q: too few fields", line)
	}
	lo, hi, ok := strings.Cut(fields[0], "-")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if !ok || err1 != nil || err2 != nil || end <= start {
		return mapping{}, fmt.Errorf("line %q: bad address range", line)
	}
	m := mapping{start: start, end: end, perms: fields[1]}
	if len(fields) > 5 {
		m.name = strings.Join(fields[5:], " ")
	}
	return m, nil
}

// findVDSO reads pid's vDSO: its mapping in maps, its image through mem
// (the process's memory, /proc/PID/mem), and its clock functions.
func findVDSO(pid int, maps []mapping, mem *os.File) (*VDSO, error) {
	for _, m := range maps {
		if m.name != "[vdso]" {
			continue
		}
		img := make([]byte, m.end-m.start)
		if _, err := mem.ReadAt(img, int64(m.start)); err != nil {
			return nil, fmt.Errorf("reading the vDSO of %d: %w", pid, goneIfEOF(err))
		}
		funcs, err := vdsoFuncs(img)
		if err != nil {
			return nil, fmt.Errorf("the vDSO of %d: %w", pid, err)
		}
		return &VDSO{Start: m.start, End: m.end, Image: img, Funcs: funcs}, nil
	}
	return nil, fmt.Errorf("process %d has no vDSO mapped", pid)
}

// vdsoFuncs finds the clock functions in a vDSO image: an x86-64 ELF
// shared object whose dynamic symbols are offsets from its start. It
// needs clock_gettime; gettimeofday and time are patched where exported.
func vdsoFuncs(img []byte) (map[int]uint64, error) {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("not an ELF image: %w", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("a %v %v vDSO: only x86-64 is patched", f.Class, f.Machine)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("its dynamic symbols: %w", err)
	}
	funcs := map[int]uint64{}
	for _, s := range syms {
		for entry, name := range vdsoNames {
			if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value+patchSize <= uint64(len(img)) {
				funcs[entry] = s.Value
			}
		}
	}
	if _, ok := funcs[entryClockGettime]; !ok {
		return nil, fmt.Errorf("no %s", vdsoNames[entryClockGettime])
	}
	return funcs, nil
}

// goneIfEOF is err, or errExited where a read or write of a process's
// memory found nothing there (EOF, or a short write's unexpected EOF):
// the mapping went with its image, by an exec or an exit.
func goneIfEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errExited
	}
	return err
}
