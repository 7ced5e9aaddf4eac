package vdsoclock

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// patchSize is how many bytes a patch rewrites at a function's entry: one
// aligned 8-byte word holding a jmp rel32 (5 bytes) and the 3 bytes that
// were there after it, so that a thread running the function reads the
// old word or the new, never half of each.
const patchSize = 8

// Patched is what a patch of a process found or left: where its code and
// data pages are, and the page's content.
type Patched struct {
	// Code is the address of the code page in the process; the data page
	// follows it.
	Code uint64
	// Funcs are the vDSO functions redirected, by name; Direct are those
	// the code calls through their moved start (see slot.go), the others
	// by the syscall.
	Funcs, Direct []string
	// Page is the data page as last written, and Counter its counter.
	Page    Page
	Counter uint64
}

// Patch makes pid's clocks show s: it maps the code and a data page into
// the process (near its vDSO, so that a rel32 jump reaches them) and
// redirects the vDSO's clock functions to them; a process patched
// already gets its data page rewritten (see Set), nothing more. Every
// thread of pid is stopped meanwhile, and let go before Patch returns,
// whatever happens. pid must be an x86-64 process; the caller checks that
// it is one of chaos's.
func Patch(pid int, s Skew) (*Patched, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkExecutable(pid); err != nil {
		return nil, err
	}
	if p, err := Inspect(pid); err != nil {
		return nil, err
	} else if p != nil {
		return Set(pid, s)
	}
	var p *Patched
	err := whileStopped(pid, func(st *stopped, mem *os.File) error {
		var err error
		p, err = st.patch(mem, s)
		return err
	})
	return p, err
}

// patch maps the pages into the stopped process, writes them and
// redirects its vDSO's clock functions (see Patch).
func (st *stopped) patch(mem *os.File, s Skew) (*Patched, error) {
	pid := st.pid
	maps, err := readMaps(pid)
	if err != nil {
		return nil, err
	}
	v, err := findVDSO(pid, maps, mem)
	if err != nil {
		return nil, err
	}
	at, err := st.mapPages(v, maps)
	if err != nil {
		return nil, err
	}
	page := PageFor(s, readings())
	codePage := make([]byte, pageSize)
	copy(codePage, code[:])
	direct := fillSlots(codePage, at, v)
	if err := writePages(mem, at, codePage, page); err != nil {
		return nil, err
	}
	if err := st.protectCode(v, at); err != nil {
		return nil, err
	}
	funcs, err := st.redirect(mem, v, at)
	if err != nil {
		return nil, err
	}
	return &Patched{Code: at, Funcs: funcs, Direct: direct, Page: page, Counter: 0}, nil
}

// checkExecutable refuses a process whose executable is not a 64-bit
// x86-64 ELF program, with the reason.
func checkExecutable(pid int) error {
	f, err := elf.Open(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("process %d: %w", pid, errExited)
		}
		return fmt.Errorf("the executable of %d: %w", pid, seizeHint(err))
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("process %d runs a %v %v program: only x86-64 programs are patched", pid, f.Class, f.Machine)
	}
	return nil
}

// syscallInsn is the address of a syscall instruction in v (its
// fallback paths have them): where a stopped thread is sent to run a
// syscall of ours.
func syscallInsn(v *VDSO) (uint64, error) {
	i := bytes.Index(v.Image, []byte{0x0f, 0x05})
	if i < 0 {
		return 0, errors.New("the vDSO has no syscall instruction to borrow")
	}
	return v.Start + uint64(i), nil
}

// mapPages maps the two pages, read-write, at a free address within a
// rel32 jump of v, by an mmap the process's first thread makes.
func (s *stopped) mapPages(v *VDSO, maps []mapping) (uint64, error) {
	at, err := freeNear(v, maps, 2*pageSize)
	if err != nil {
		return 0, err
	}
	insn, err := syscallInsn(v)
	if err != nil {
		return 0, err
	}
	const mapFixedNoReplace = 0x100000
	got, err := s.syscall(s.pid, insn, unix.SYS_MMAP, at, 2*pageSize,
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|mapFixedNoReplace, math.MaxUint64, 0)
	if err != nil {
		return 0, err
	}
	if got != at {
		return 0, fmt.Errorf("mmap in %d at %#x: %w", s.pid, at, unix.Errno(-int64(got)))
	}
	return at, nil
}

// freeNear finds need free bytes (whole pages) below v's mapping (or
// above it), within a rel32 jump of every byte of it.
func freeNear(v *VDSO, maps []mapping, need uint64) (uint64, error) {
	const reach = 1 << 30 // well within ±2 GiB
	free := func(at uint64) bool {
		for _, m := range maps {
			if at < m.end && m.start < at+need {
				return false
			}
		}
		return true
	}
	for d := uint64(need); d < reach; d += pageSize {
		if v.Start > d && free(v.Start-d) {
			return v.Start - d, nil
		}
		if free(v.End + d - need) {
			return v.End + d - need, nil
		}
	}
	return 0, errors.New("no free pages within reach of the vDSO")
}

// writePages writes the code page and the data page p at at, through mem.
func writePages(mem *os.File, at uint64, codePage []byte, p Page) error {
	if _, err := mem.WriteAt(codePage, int64(at)); err != nil {
		return fmt.Errorf("writing the code: %w", goneIfEOF(err))
	}
	if _, err := mem.WriteAt(p.Encode(0), int64(at+pageSize)); err != nil {
		return fmt.Errorf("writing the data page: %w", goneIfEOF(err))
	}
	return nil
}

// protectCode makes the code page read-execute.
func (s *stopped) protectCode(v *VDSO, at uint64) error {
	insn, err := syscallInsn(v)
	if err != nil {
		return err
	}
	got, err := s.syscall(s.pid, insn, unix.SYS_MPROTECT, at, pageSize, unix.PROT_READ|unix.PROT_EXEC)
	if err == nil && got != 0 {
		err = fmt.Errorf("mprotect in %d: %w", s.pid, unix.Errno(-int64(got)))
	}
	return err
}

// redirect rewrites the entry of each clock function of v with a jump to
// its entry in the code at at, after stepping every thread out of the
// bytes it rewrites, and returns the names of those it rewrote.
func (s *stopped) redirect(mem *os.File, v *VDSO, at uint64) ([]string, error) {
	var spans [][2]uint64
	for _, off := range v.Funcs {
		spans = append(spans, [2]uint64{v.Start + off, v.Start + off + patchSize})
	}
	if err := s.stepOut(spans); err != nil {
		return nil, err
	}
	var names []string
	for _, entry := range []int{entryClockGettime, entryGettimeofday, entryTime} {
		off, ok := v.Funcs[entry]
		if !ok {
			continue
		}
		fn := v.Start + off
		if fn%patchSize != 0 {
			return names, fmt.Errorf("%s at %#x is not %d-byte aligned: it cannot be patched in one write", vdsoNames[entry], fn, patchSize)
		}
		word := jumpWord(fn, at+uint64(entry), v.Image[off:off+patchSize])
		if _, err := mem.WriteAt(word, int64(fn)); err != nil {
			return names, fmt.Errorf("patching %s: %w", vdsoNames[entry], goneIfEOF(err))
		}
		names = append(names, vdsoNames[entry])
	}
	return names, nil
}

// jumpWord is the word written at fn: jmp rel32 to target, then the last
// three bytes of orig (the word that was there).
func jumpWord(fn, target uint64, orig []byte) []byte {
	w := make([]byte, patchSize)
	w[0] = 0xe9
	binary.LittleEndian.PutUint32(w[1:], uint32(int32(int64(target)-int64(fn+5))))
	copy(w[5:], orig[5:patchSize])
	return w
}

// readings are this process's readings of every block's clock: the
// kernel's, which every process on the host shares.
func readings() Readings {
	r := Readings{}
	for _, b := range blocks {
		var ts unix.Timespec
		_ = unix.ClockGettime(int32(b.clock), &ts)
		r[b.off] = ts.Nano()
	}
	return r
}
