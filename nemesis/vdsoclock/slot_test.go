//go:build linux && amd64

package vdsoclock

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The prologue of this kernel's clock_gettime (push %rbp; mov %rsp,%rbp;
// push %r14) moves: the slot holds it and jumps back after it.
func TestMovedStartCopiesWholeInstructionsAndJumpsBack(t *testing.T) {
	fn := []byte{0x55, 0x48, 0x89, 0xe5, 0x41, 0x56, 0x53, 0x48, 0x83, 0xe4, 0xf0}
	b, ok := movedStart(fn, 0x7000_0000_1000, 0x7000_0000_0300)
	require.True(t, ok)
	assert.Equal(t, fn[:6], b[:6], "push, mov, push: 6 bytes cover the 5 the jump overwrites")
	assert.Equal(t, byte(0xe9), b[6])
	rel := int32(binary.LittleEndian.Uint32(b[7:]))
	assert.Equal(t, int64(0x7000_0000_1000+6), int64(0x7000_0000_0300+6+5)+int64(rel), "back to the instruction after them")
}

func TestMovedStartRefusesWhatCannotRunElsewhere(t *testing.T) {
	for name, fn := range map[string][]byte{
		"rip-relative": {0x4c, 0x8d, 0x15, 0xea, 0x94, 0xff, 0xff, 0x90}, // lea -0x6b16(%rip),%r10
		"call":         {0xe8, 0, 0, 0, 0, 0x90},
		"short jump":   {0x55, 0xeb, 0x10, 0x90, 0x90, 0x90},
		"not code":     {0x0f, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		_, ok := movedStart(fn, 0x7000_0000_1000, 0x7000_0000_0300)
		assert.False(t, ok, name)
	}
}

// The code calls this process's own vDSO through its moved start, and
// the clocks are moved as through the syscall.
func TestCodeCallsTheKernelsFunctionThroughItsMovedStart(t *testing.T) {
	v := ownVDSO(t)
	codePage := make([]byte, pageSize)
	direct := fillSlots(codePage, v.Start-pageSize, v)
	if len(direct) == 0 {
		t.Skip("this kernel's vDSO functions do not start with instructions that move")
	}
	assert.Contains(t, direct, "__vdso_clock_gettime")
	s := Skew{Realtime: 42 * time.Second, Monotonic: 7 * time.Second}
	m, err := mapPagesHere(PageFor(s, readingsNow(t)), 0, v)
	require.NoError(t, err)
	t.Cleanup(m.unmap)
	for id, want := range map[int]time.Duration{clockRealtime: s.Realtime, clockMonotonic: s.Monotonic, clockBoottime: s.Monotonic} {
		before := kernelNow(t, id)
		got, r := m.clockGettime(id)
		after := kernelNow(t, id)
		require.Zero(t, r)
		shifted := got - int64(want)
		assert.True(t, shifted >= before && shifted <= after, "clock %d: %d less %v not in [%d, %d]", id, got, want, before, after)
	}
	_, r := m.clockGettime(1 << 20)
	assert.Equal(t, -22, int(int64(r)), "EINVAL from the kernel's own function")
}
