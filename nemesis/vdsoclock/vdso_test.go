//go:build linux && amd64

package vdsoclock

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This process's own vDSO, read from /proc/self: its clock functions are
// found, 8-byte aligned (one write patches each), and the addresses the
// Go runtime calls match.
func TestFindVDSOReadsTheClockFunctions(t *testing.T) {
	v := ownVDSO(t)
	require.Contains(t, v.Funcs, entryClockGettime)
	for entry, off := range v.Funcs {
		assert.Zero(t, (v.Start+off)%patchSize, "%s at %#x", vdsoNames[entry], v.Start+off)
		assert.Less(t, off+patchSize, uint64(len(v.Image)))
	}
	f, err := elf.NewFile(bytes.NewReader(v.Image))
	require.NoError(t, err)
	assert.Equal(t, elf.ET_DYN, f.Type)
}

func TestVDSOFuncsRefusesWhatIsNotAnX8664VDSO(t *testing.T) {
	_, err := vdsoFuncs([]byte("not an elf image at all"))
	assert.ErrorContains(t, err, "not an ELF image")
	img := bytes.Clone(ownVDSO(t).Image)
	img[elf.EI_CLASS] = byte(elf.ELFCLASS32)
	_, err = vdsoFuncs(img)
	assert.Error(t, err)
}

func TestParseMapping(t *testing.T) {
	m, err := parseMapping("7ffd1b5e3000-7ffd1b5e5000 r-xp 00000000 00:00 0                          [vdso]")
	require.NoError(t, err)
	assert.Equal(t, mapping{start: 0x7ffd1b5e3000, end: 0x7ffd1b5e5000, perms: "r-xp", name: "[vdso]"}, m)
	m, err = parseMapping("55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0")
	require.NoError(t, err)
	assert.Empty(t, m.name)
	for _, bad := range []string{"", "zz-10 r-xp 0 0 0", "10-5 r-xp 0 0 0", "10 r-xp"} {
		_, err := parseMapping(bad)
		assert.Error(t, err, bad)
	}
}

// A page survives its encoding; anything without the magic is refused.
func TestPageEncodesAndDecodes(t *testing.T) {
	p := PageFor(Skew{Realtime: -time.Hour, Monotonic: time.Second, Rate: 0.5}, Readings{offRealtime: 1, offMonotonic: 2, offBoottime: 3, offTAI: 4})
	b := p.Encode(6)
	got, counter, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.Equal(t, uint64(6), counter)
	assert.Equal(t, 0.5, got.Rate())
	assert.Equal(t, byte(offRealtime), b[offClasses+clockRealtime])
	assert.Equal(t, byte(offMonotonic), b[offClasses+clockMonotonicRaw])
	assert.Equal(t, byte(offBoottime), b[offClasses+clockBoottime])
	assert.Zero(t, b[offClasses+2], "CLOCK_PROCESS_CPUTIME_ID is left alone")
	b[offMagic] = 'X'
	_, _, err = Decode(b)
	assert.ErrorContains(t, err, "not a chaos clock page")
	_, _, err = Decode(b[:10])
	assert.Error(t, err)
}

// Started accepts the record of the process it names and nothing else.
func TestStartedChecksTheRecord(t *testing.T) {
	start, _, err := statOf(os.Getpid())
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(content string) string {
		f := dir + "/rec"
		require.NoError(t, os.WriteFile(f, []byte(content), 0o644))
		return f
	}
	pid := os.Getpid()
	assert.NoError(t, Started(pid, write(strconv.Itoa(pid)+" "+start+"\n")))
	assert.ErrorContains(t, Started(pid, write(strconv.Itoa(pid+1)+" "+start)), "is not the one")
	assert.ErrorContains(t, Started(pid, write(strconv.Itoa(pid)+" 1")), "another process reused its pid")
	assert.ErrorContains(t, Started(pid, write("")), "is not the one")
	assert.ErrorContains(t, Started(pid, dir+"/missing"), "the start record")
}

// Tree lists a process and its descendants.
func TestTreeListsDescendants(t *testing.T) {
	tree, err := Tree(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), tree[0])
}

// A line says the rate as it was asked, not its fixed-point rounding.
func TestLineSaysTheRateAsAsked(t *testing.T) {
	for _, rate := range []float64{0.05, 0.1, 0.71, 1.41, 2} {
		p := &Patched{Page: PageFor(Skew{Rate: rate}, readings())}
		assert.Equal(t, rate, LineOf(1, p, nil, false).Rate)
	}
}

// A read that finds nothing and a write that lands short (the mapping went
// with an exec or an exit) both say the process is gone; other errors are
// kept.
func TestGoneIfEOF(t *testing.T) {
	for _, err := range []error{io.EOF, io.ErrUnexpectedEOF, fmt.Errorf("write /proc/1/mem: %w", io.ErrUnexpectedEOF)} {
		assert.ErrorIs(t, goneIfEOF(err), errExited, "%v", err)
	}
	other := errors.New("permission denied")
	assert.Equal(t, other, goneIfEOF(other))
}
