package vdsoclock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// Inspect reads pid's vDSO and reports the patch it holds: nil when its
// clock functions are as the kernel made them (as this process's own
// vDSO has them: the same kernel's); an error when one of them was
// rewritten by something other than Patch.
func Inspect(pid int) (*Patched, error) {
	mem, err := openMem(pid, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	v, own, err := vdsoPair(pid, mem)
	if err != nil {
		return nil, err
	}
	return inspect(mem, v, own)
}

// vdsoPair reads pid's vDSO and this process's own.
func vdsoPair(pid int, mem *os.File) (v, own *VDSO, err error) {
	maps, err := readMaps(pid)
	if err != nil {
		return nil, nil, err
	}
	if v, err = findVDSO(pid, maps, mem); err != nil {
		return nil, nil, err
	}
	self, err := os.Open("/proc/self/mem")
	if err != nil {
		return nil, nil, err
	}
	defer self.Close()
	ownMaps, err := readMaps(os.Getpid())
	if err != nil {
		return nil, nil, err
	}
	if own, err = findVDSO(os.Getpid(), ownMaps, self); err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(unpatched(v, own), own.Image) {
		return nil, nil, fmt.Errorf("the vDSO of %d differs from this process's beyond its clock functions: not the same kernel's", pid)
	}
	return v, own, nil
}

// unpatched is v's image with the words at its clock functions taken from
// own: what v's image was before any patch.
func unpatched(v, own *VDSO) []byte {
	img := bytes.Clone(v.Image)
	for _, off := range v.Funcs {
		if off+patchSize <= uint64(len(own.Image)) {
			copy(img[off:off+patchSize], own.Image[off:off+patchSize])
		}
	}
	return img
}

// inspect finds the patch of v: the functions whose word differs from
// own's, each a jump into the same code page, whose data page is ours.
func inspect(mem *os.File, v, own *VDSO) (*Patched, error) {
	var p *Patched
	for _, entry := range []int{entryClockGettime, entryGettimeofday, entryTime} {
		off, ok := v.Funcs[entry]
		if !ok || bytes.Equal(v.Image[off:off+patchSize], own.Image[off:off+patchSize]) {
			continue
		}
		w := v.Image[off : off+patchSize]
		if w[0] != 0xe9 {
			return nil, fmt.Errorf("%s was rewritten, but not by chaos (no jump at its entry)", vdsoNames[entry])
		}
		target := v.Start + off + 5 + uint64(int64(int32(binary.LittleEndian.Uint32(w[1:5]))))
		codeAt := target - uint64(entry)
		if p == nil {
			p = &Patched{Code: codeAt}
		} else if p.Code != codeAt {
			return nil, fmt.Errorf("%s jumps to %#x, outside the code page at %#x", vdsoNames[entry], target, p.Code)
		}
		p.Funcs = append(p.Funcs, vdsoNames[entry])
	}
	if p == nil {
		return nil, nil
	}
	buf := make([]byte, pageUsed)
	if _, err := mem.ReadAt(buf, int64(p.Code+pageSize)); err != nil {
		return nil, fmt.Errorf("reading the data page at %#x: %w", p.Code+pageSize, goneIfEOF(err))
	}
	page, counter, err := Decode(buf)
	if err != nil {
		return nil, fmt.Errorf("the vDSO jumps to %#x: %w", p.Code, err)
	}
	p.Page, p.Counter = page, counter
	return p, nil
}

// Set rewrites the data page of pid, patched already, so that its clocks
// show s from now on, under the page's counter: made odd, the page
// written, made even again; the process goes on meanwhile (a clock read
// waits out the write). It refuses to move the monotonic clocks back from
// what they show now.
func Set(pid int, s Skew) (*Patched, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	p, err := Inspect(pid)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("process %d is not patched", pid)
	}
	now := readings()
	if _, mono := p.Page.Shown(now); s.Monotonic < mono {
		return nil, fmt.Errorf("the monotonic clocks of %d show %v ahead; %v would move them back, which no real clock does", pid, mono, s.Monotonic)
	}
	page := PageFor(s, now)
	counter, err := writePage(pid, p, page)
	if err != nil {
		return nil, err
	}
	p.Page, p.Counter = page, counter
	return p, nil
}

// writePage writes page over p's data page under its counter, and returns
// the counter it left.
func writePage(pid int, p *Patched, page Page) (uint64, error) {
	mem, err := openMem(pid, os.O_RDWR)
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	at := int64(p.Code + pageSize)
	counter := p.Counter | 1 // odd: readers wait
	if counter == p.Counter {
		counter += 2 // it was odd already (a writer died midway)
	}
	word := make([]byte, 8)
	binary.LittleEndian.PutUint64(word, counter)
	if _, err := mem.WriteAt(word, at+offCounter); err != nil {
		return 0, fmt.Errorf("the data page of %d: %w", pid, goneIfEOF(err))
	}
	b := page.Encode(0)
	if _, err := mem.WriteAt(b[offK:], at+offK); err != nil {
		return counter, fmt.Errorf("the data page of %d: %w", pid, goneIfEOF(err))
	}
	counter++
	binary.LittleEndian.PutUint64(word, counter)
	if _, err := mem.WriteAt(word, at+offCounter); err != nil {
		return counter - 1, fmt.Errorf("the data page of %d: %w", pid, goneIfEOF(err))
	}
	return counter, nil
}

// Heal puts back the vDSO words of a patched pid (from this process's own
// vDSO, the same kernel's), every thread stopped meanwhile, and resets its
// data page to true time for a thread still inside the code; the pages
// stay mapped, as a thread may be inside them. A process not patched is
// left alone: (nil, nil). Its monotonic clocks read the kernel's again at
// once, back by what they read ahead: Drain first, and wait what it says,
// so that they never read back (`chaos vdso-clock heal` does).
func Heal(pid int) (*Patched, error) {
	p, err := Inspect(pid)
	if err != nil || p == nil {
		return p, err
	}
	err = whileStopped(pid, func(_ *stopped, mem *os.File) error {
		v, own, err := vdsoPair(pid, mem)
		if err != nil {
			return err
		}
		var errs []error
		for _, off := range v.Funcs {
			if _, err := mem.WriteAt(own.Image[off:off+patchSize], int64(v.Start+off)); err != nil {
				errs = append(errs, fmt.Errorf("restoring the vDSO of %d at %#x: %w", pid, v.Start+off, goneIfEOF(err)))
			}
		}
		if _, err := writePage(pid, p, PageFor(Skew{}, readings())); err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
	return p, err
}

// Offsets is what p's clocks show against true time now.
func (p *Patched) Offsets() (realtime, monotonic time.Duration) { return p.Page.Shown(readings()) }

// Line is what `chaos vdso-clock` prints for each process, one JSON line
// each, and what the vdso clock strategy reads back.
type Line struct {
	Pid int `json:"pid"`
	// Code is the code page's address ("0x7f..."), where a patch is or
	// was; Funcs are the vDSO functions it redirects.
	Code  string   `json:"code,omitempty"`
	Funcs []string `json:"funcs,omitempty"`
	// Direct are the functions the code calls through their moved start
	// (tens of nanoseconds a call); the others it calls by the syscall.
	Direct []string `json:"direct,omitempty"`
	// Patched is false for a process whose vDSO is the kernel's own.
	Patched bool `json:"patched"`
	// RealtimeNS and MonotonicNS are how far its clocks are from true
	// time, read back from its data page; Rate is how fast they run.
	RealtimeNS  int64   `json:"realtime_offset_ns"`
	MonotonicNS int64   `json:"monotonic_offset_ns"`
	Rate        float64 `json:"rate,omitempty"`
	// Error is why the action failed on this process.
	Error string `json:"error,omitempty"`
}

// LineOf is pid's line after an action that returned p and err; healed
// says the vDSO is the kernel's own again.
func LineOf(pid int, p *Patched, err error, healed bool) Line {
	l := Line{Pid: pid}
	switch {
	case err != nil:
		l.Error = err.Error()
	case p != nil:
		l.Code, l.Funcs, l.Direct = fmt.Sprintf("%#x", p.Code), p.Funcs, p.Direct
		if !healed {
			rt, mono := p.Offsets()
			// The rate to 9 digits: the page holds it in 32 fraction bits.
			l.Patched, l.Rate, l.RealtimeNS, l.MonotonicNS = true, math.Round(p.Page.Rate()*1e9)/1e9, int64(rt), int64(mono)
		}
	}
	return l
}
