//go:build linux && amd64

package vdsoclock

import (
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
	m := mapCodeB(b, PageFor(Skew{Monotonic: 1, Rate: 2}, readings()), nil)
	arg := m.scratch()
	b.Run("vdso", func(b *testing.B) {
		v := ownVDSO(b)
		fn := uintptr(v.Start + v.Funcs[entryClockGettime])
		for range b.N {
			callc.Call2(fn, clockMonotonic, arg)
		}
	})
	b.Run("syscall", func(b *testing.B) {
		for range b.N {
			_, _, _ = unix.RawSyscall(unix.SYS_CLOCK_GETTIME, clockMonotonic, arg, 0)
		}
	})
	b.Run("patched-syscall", func(b *testing.B) {
		fn := m.entry(entryClockGettime)
		for range b.N {
			callc.Call2(fn, clockMonotonic, arg)
		}
	})
	b.Run("patched", func(b *testing.B) {
		near := mapCodeB(b, PageFor(Skew{Monotonic: 1, Rate: 2}, readings()), ownVDSO(b))
		fn := near.entry(entryClockGettime)
		for range b.N {
			callc.Call2(fn, clockMonotonic, near.scratch())
		}
	})
}
