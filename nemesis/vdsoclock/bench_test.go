//go:build linux && amd64

package vdsoclock

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"chaos/nemesis/vdsoclock/internal/callc"
)

// BenchmarkClockGettime is the patch's cost per call (issue 41: at most
// 500 ns): CLOCK_MONOTONIC read through this process's own vDSO
// (unpatched), through a plain syscall, and through the code a patch
// redirects the vDSO to (the syscall and the data page's arithmetic).
//
//	go test ./nemesis/vdsoclock -run '^$' -bench ClockGettime
func BenchmarkClockGettime(b *testing.B) {
	m := mapCodeB(b, PageFor(Skew{Monotonic: 1, Rate: 2}, readings()))
	arg := m.scratch()
	b.Run("vdso", func(b *testing.B) {
		fn := ownVDSOFunc(b, entryClockGettime)
		for range b.N {
			callc.Call2(fn, clockMonotonic, arg)
		}
	})
	b.Run("syscall", func(b *testing.B) {
		for range b.N {
			_, _, _ = unix.RawSyscall(unix.SYS_CLOCK_GETTIME, clockMonotonic, arg, 0)
		}
	})
	b.Run("patched", func(b *testing.B) {
		fn := m.entry(entryClockGettime)
		for range b.N {
			callc.Call2(fn, clockMonotonic, arg)
		}
	})
}

// ownVDSOFunc is the address of a clock function of this process's vDSO.
func ownVDSOFunc(b *testing.B, entry int) uintptr {
	maps, err := readMaps(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	v, err := findVDSO(os.Getpid(), maps, mem)
	if err != nil {
		b.Fatal(err)
	}
	return uintptr(v.Start + v.Funcs[entry])
}
