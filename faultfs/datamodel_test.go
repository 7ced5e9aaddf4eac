package faultfs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// dataModel is what a file holds (cur) and what of it is durable (dur),
// as the durability model says, for TestDataChangesMatchTheModel.
type dataModel struct {
	cur, dur []byte
}

// resize cuts or zero-extends m.cur to n bytes.
func (m *dataModel) resize(n int) {
	if n <= len(m.cur) {
		m.cur = m.cur[:n]
		return
	}
	m.cur = append(m.cur, make([]byte, n-len(m.cur))...)
}

// zero makes [a, b) of m.cur zeros, within its size.
func (m *dataModel) zero(a, b int) {
	if a < len(m.cur) {
		clear(m.cur[a:min(b, len(m.cur))])
	}
}

// dataOp is one random data change or sync of the file f (the mount's
// path p), done on the file and on the model; it names what it did.
func dataOp(t *testing.T, r *rand.Rand, f *os.File, p string, m *dataModel) string {
	t.Helper()
	off, n := r.IntN(len(m.cur)+8192), 1+r.IntN(9000)
	fd := int(f.Fd())
	switch k := r.IntN(10); k {
	case 0, 1, 2:
		data := make([]byte, n)
		if r.IntN(4) > 0 {
			for i := range data {
				data[i] = byte(1 + r.IntN(255))
			}
		}
		_, err := f.WriteAt(data, int64(off))
		require.NoError(t, err)
		m.resize(max(len(m.cur), off+n))
		copy(m.cur[off:], data)
		return fmt.Sprintf("write [%d, %d)", off, off+n)
	case 3:
		require.NoError(t, f.Truncate(int64(off)))
		m.resize(off)
		return fmt.Sprintf("ftruncate %d", off)
	case 4:
		require.NoError(t, os.Truncate(p, int64(off)))
		m.resize(off)
		return fmt.Sprintf("truncate %d", off)
	case 5:
		mode := []uint32{0, unix.FALLOC_FL_KEEP_SIZE}[r.IntN(2)]
		require.NoError(t, unix.Fallocate(fd, mode, int64(off), int64(n)))
		if mode == 0 {
			m.resize(max(len(m.cur), off+n))
		}
		return fmt.Sprintf("fallocate %#x [%d, %d)", mode, off, off+n)
	case 6:
		mode := []uint32{unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE, unix.FALLOC_FL_ZERO_RANGE,
			unix.FALLOC_FL_ZERO_RANGE | unix.FALLOC_FL_KEEP_SIZE}[r.IntN(3)]
		err := unix.Fallocate(fd, mode, int64(off), int64(n))
		if errors.Is(err, syscall.EOPNOTSUPP) {
			return "unsupported fallocate"
		}
		require.NoError(t, err)
		if mode&unix.FALLOC_FL_KEEP_SIZE == 0 {
			m.resize(max(len(m.cur), off+n))
		}
		m.zero(off, off+n)
		return fmt.Sprintf("fallocate %#x [%d, %d)", mode, off, off+n)
	case 7, 8:
		if k == 7 {
			require.NoError(t, f.Sync())
		} else {
			require.NoError(t, unix.Fdatasync(fd))
		}
		m.dur = bytes.Clone(m.cur)
		return "sync"
	default:
		other, err := os.Open(p) // its release drops a state with nothing pending
		require.NoError(t, err)
		require.NoError(t, other.Close())
		return "open and close"
	}
}

// Random writes, truncations, allocations, hole punches and syncs of a
// file, its handle closed and reopened now and then, and power losses:
// the file always reads as the model says, and a power loss gives back
// exactly what the model says is durable (whatever the file system knew
// of its zeros, and whatever descriptors it kept), with the default bound
// on undo memory and with one so small that most old bytes spill.
func TestDataChangesMatchTheModel(t *testing.T) {
	for _, limit := range []int64{0, 4096} {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("undo memory %d/%d", limit, seed), func(t *testing.T) {
				dataChangesMatchTheModel(t, seed, limit)
			})
		}
	}
}

func dataChangesMatchTheModel(t *testing.T, seed uint64, limit int64) {
	r := rand.New(rand.NewPCG(seed, 30))
	initial := bytes.Repeat([]byte("durable!"), 1024)
	tf := mountTestOpts(t, map[string]string{"f": string(initial)}, Options{UndoMemory: limit})
	m := &dataModel{cur: bytes.Clone(initial), dur: bytes.Clone(initial)}
	p := tf.m("f")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		require.NoError(t, err)
		return f
	}
	f := open()
	defer func() { f.Close() }()
	var did []string
	var spilled int64
	for step := range 400 {
		switch r.IntN(40) {
		case 0:
			require.NoError(t, f.Close())
			tf.powerLoss(t)
			m.cur = bytes.Clone(m.dur)
			f = open()
			did = append(did, "power loss")
		case 1:
			require.NoError(t, f.Close())
			f = open()
			did = append(did, "reopen")
		default:
			did = append(did, dataOp(t, r, f, p, m))
		}
		b, err := os.ReadFile(filepath.Join(tf.backing, "f"))
		require.NoError(t, err)
		require.True(t, bytes.Equal(m.cur, b), "step %d: the file differs from the model after %q", step, did[max(0, len(did)-8):])
		checkUndoCounts(t, tf.Tracker)
		spilled = max(spilled, tf.Status().UndoSpilledBytes)
	}
	if limit > 0 {
		assert.Positive(t, spilled, "old bytes spilled")
	}
}
