//go:build linux && amd64

package vdsoclock

import (
	"math"
	"os"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"chaos/nemesis/vdsoclock/internal/callc"
)

// mapped is code and a data page mapped in this process, as Patch maps
// them in a node's, and a scratch page for what the code writes (memory
// Go does not move: the code gets its address as a plain integer).
type mapped struct{ mem []byte }

// scratch is the address of the scratch page, the third.
func (m *mapped) scratch() uintptr { return uintptr(unsafe.Pointer(&m.mem[2*pageSize])) }

// timespec is the timespec at the scratch page's start.
func (m *mapped) timespec() *unix.Timespec {
	return (*unix.Timespec)(unsafe.Pointer(&m.mem[2*pageSize]))
}

func mapCode(t *testing.T, p Page, counter uint64) *mapped {
	t.Helper()
	m, err := mapPagesHere(p, counter, nil)
	require.NoError(t, err)
	t.Cleanup(m.unmap)
	return m
}

func mapCodeB(b *testing.B, p Page, v *VDSO) *mapped {
	m, err := mapPagesHere(p, 0, v)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.unmap)
	return m
}

// mapPagesHere maps the code and the data page p in this process, and a
// scratch page: near this process's vDSO v with slots that call it, or
// anywhere with slots that make the syscall (v nil).
func mapPagesHere(p Page, counter uint64, v *VDSO) (*mapped, error) {
	var hint uint64
	flags := syscall.MAP_PRIVATE | syscall.MAP_ANON
	if v != nil {
		maps, err := readMaps(os.Getpid())
		if err != nil {
			return nil, err
		}
		if hint, err = freeNear(v, maps, 3*pageSize); err != nil {
			return nil, err
		}
		flags |= 0x100000 // MAP_FIXED_NOREPLACE
	}
	ptr, err := unix.MmapPtr(-1, 0, unsafe.Add(nil, hint), 3*pageSize, syscall.PROT_READ|syscall.PROT_WRITE, flags)
	if err != nil {
		return nil, err
	}
	mem := unsafe.Slice((*byte)(ptr), 3*pageSize)
	copy(mem, code[:])
	fillSlots(mem[:pageSize], uint64(uintptr(ptr)), v)
	copy(mem[pageSize:], p.Encode(counter))
	if err := syscall.Mprotect(mem[:pageSize], syscall.PROT_READ|syscall.PROT_EXEC); err != nil {
		_ = syscall.Munmap(mem)
		return nil, err
	}
	return &mapped{mem: mem}, nil
}

func (m *mapped) unmap() { _ = syscall.Munmap(m.mem) }

// ownVDSO is this process's vDSO.
func ownVDSO(t testing.TB) *VDSO {
	maps, err := readMaps(os.Getpid())
	require.NoError(t, err)
	mem, err := os.Open("/proc/self/mem")
	require.NoError(t, err)
	defer mem.Close()
	v, err := findVDSO(os.Getpid(), maps, mem)
	require.NoError(t, err)
	return v
}

func (m *mapped) entry(off int) uintptr { return uintptr(unsafe.Pointer(&m.mem[off])) }

// clockGettime calls the code's clock_gettime for clock id.
func (m *mapped) clockGettime(id int) (int64, uintptr) {
	r := callc.Call2(m.entry(entryClockGettime), uintptr(id), m.scratch())
	return m.timespec().Nano(), r
}

func kernelNow(t *testing.T, id int) int64 {
	var ts unix.Timespec
	require.NoError(t, unix.ClockGettime(int32(id), &ts))
	return ts.Nano()
}

// readingsNow are this process's readings of every block's clock.
func readingsNow(t *testing.T) Readings {
	r := Readings{}
	for _, b := range blocks {
		r[b.off] = kernelNow(t, b.clock)
	}
	return r
}

func TestCodeOffsetsEveryClockByItsBlock(t *testing.T) {
	s := Skew{Realtime: -3 * time.Hour, Monotonic: 5 * time.Second}
	m := mapCode(t, PageFor(s, readingsNow(t)), 0)
	for _, c := range []struct {
		id   int
		want time.Duration
	}{
		{clockRealtime, s.Realtime}, {clockRealtimeCoarse, s.Realtime}, {clockTAI, s.Realtime},
		{clockMonotonic, s.Monotonic}, {clockMonotonicRaw, s.Monotonic},
		{clockMonotonicCoarse, s.Monotonic}, {clockBoottime, s.Monotonic},
		{unix.CLOCK_PROCESS_CPUTIME_ID, 0}, {unix.CLOCK_THREAD_CPUTIME_ID, 0},
	} {
		before := kernelNow(t, c.id)
		got, r := m.clockGettime(c.id)
		after := kernelNow(t, c.id)
		require.Zero(t, r, "clock %d", c.id)
		shift := got - int64(c.want)
		// Coarse clocks tick in jiffies; the rest lie between the readings.
		slack := int64(0)
		if c.id == clockRealtimeCoarse || c.id == clockMonotonicCoarse {
			slack = int64(20 * time.Millisecond)
		}
		assert.True(t, shift >= before-slack && shift <= after+slack,
			"clock %d: %d shifted by %v is not within [%d, %d]", c.id, got, c.want, before, after)
	}
}

func TestCodeReturnsTheKernelsError(t *testing.T) {
	m := mapCode(t, PageFor(Skew{Realtime: time.Hour}, readingsNow(t)), 0)
	_, r := m.clockGettime(1 << 20) // no such clock
	assert.Equal(t, -int64(unix.EINVAL), int64(r))
}

// A rate set a second ago (its anchor a second back) has moved the clock
// by a second times the rate.
func TestCodeRunsTheClockAtTheRate(t *testing.T) {
	for _, rate := range []float64{2, 0.5, 0.05} {
		anchor := readingsNow(t)
		for off := range anchor {
			anchor[off] -= int64(time.Second)
		}
		m := mapCode(t, PageFor(Skew{Rate: rate}, anchor), 0)
		got, _ := m.clockGettime(clockMonotonic)
		now := kernelNow(t, clockMonotonic)
		want := float64(anchor[offMonotonic]) + float64(now-anchor[offMonotonic])*rate
		// Between the call and now the true clock moved on a little.
		assert.InDelta(t, want, float64(got), float64(time.Millisecond), "rate %v", rate)
	}
}

// The code and Page.Read agree, to the nanosecond, on a page far from
// the true clock, with a negative k and an anchor in the future.
func TestCodeComputesWhatPageReadSays(t *testing.T) {
	p := Page{K: rateK(0.25), Lead: math.MaxInt64, Realtime: Block{Off: -int64(48 * time.Hour), Anchor: math.MaxInt64 / 4}}
	p.Monotonic = Block{Off: int64(time.Minute), Anchor: -int64(time.Hour)}
	p.Boottime, p.TAI = p.Monotonic, p.Realtime
	m := mapCode(t, p, 2)
	for _, id := range []int{clockRealtime, clockMonotonic} {
		got, _ := m.clockGettime(id)
		// Invert the page: the kernel's t is the one Read maps to got,
		// within the time the call took; Read must be monotone in t.
		before := p.Read(classes[id], kernelNow(t, id)-int64(time.Second))
		after := p.Read(classes[id], kernelNow(t, id)+int64(time.Second))
		assert.True(t, got >= before && got <= after, "clock %d: %d not in [%d, %d]", id, got, before, after)
	}
}

// A clock running fast gains no more than the page's lead.
func TestCodeKeepsAFastClockWithinItsLead(t *testing.T) {
	anchor := readingsNow(t)
	for off := range anchor {
		anchor[off] -= int64(time.Second) // twice as fast for a second: a second ahead, but for the lead
	}
	m := mapCode(t, PageFor(Skew{Rate: 2, MaxLead: 300 * time.Millisecond}, anchor), 0)
	before := kernelNow(t, clockMonotonic)
	got, _ := m.clockGettime(clockMonotonic)
	after := kernelNow(t, clockMonotonic)
	lead := int64(300 * time.Millisecond)
	assert.True(t, got >= before+lead && got <= after+lead, "%d not 300 ms ahead of [%d, %d]", got, before, after)
}

func TestMulShiftIsTheSigned128BitProduct(t *testing.T) {
	for _, c := range []struct{ a, k, want int64 }{
		{1 << 32, 1, 1},
		{-(1 << 32), 1, -1},
		{3 << 40, -(1 << 31), -(3 << 39)},
		{math.MaxInt64 / 2, 1 << 33, math.MaxInt64/2*2 + 0}, // low word wraps as in the code
		{-7, 1 << 32, -7},
	} {
		assert.Equal(t, c.want, mulShift(c.a, c.k), "%d*%d>>32", c.a, c.k)
	}
}

func TestCodeGettimeofdayAndTimeMoveTheRealtimeClock(t *testing.T) {
	s := Skew{Realtime: 90 * time.Minute}
	m := mapCode(t, PageFor(s, readingsNow(t)), 0)
	before := time.Now().Add(s.Realtime).UnixMicro()
	r := callc.Call2(m.entry(entryGettimeofday), m.scratch(), 0)
	tv := *(*unix.Timeval)(unsafe.Pointer(&m.mem[2*pageSize]))
	after := time.Now().Add(s.Realtime).UnixMicro()
	require.Zero(t, r)
	got := tv.Sec*1e6 + tv.Usec
	assert.True(t, got >= before-1 && got <= after+1, "gettimeofday %d not in [%d, %d]", got, before, after)
	assert.Less(t, tv.Usec, int64(1e6))

	secs := int64(callc.Call2(m.entry(entryTime), m.scratch(), 0))
	stored := *(*int64)(unsafe.Pointer(&m.mem[2*pageSize]))
	want := time.Now().Add(s.Realtime).Unix()
	assert.InDelta(t, want, secs, 1)
	assert.Equal(t, secs, stored)
	assert.InDelta(t, want, int64(callc.Call2(m.entry(entryTime), 0, 0)), 1)
}
