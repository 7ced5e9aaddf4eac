package faultfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// run is a run of saved data at off.
func run(off int64, data string) extent {
	return extent{off: off, n: int64(len(data)), data: []byte(data)}
}

func TestExtentsGapsAndMerges(t *testing.T) {
	var es extents
	assert.Equal(t, [][2]int64{{0, 10}}, es.gaps(0, 10))
	es.add(run(4, "45"))
	assert.Equal(t, [][2]int64{{0, 4}, {6, 10}}, es.gaps(0, 10))
	assert.Equal(t, [][2]int64(nil), es.gaps(4, 6))
	es.add(run(6, "6"))
	es.add(run(0, "01"))
	es.add(run(2, "23"))
	assert.Equal(t, extents{run(0, "0123456")}, es, "touching runs merge")
	es.add(run(9, "9"))
	assert.Equal(t, [][2]int64{{7, 9}, {10, 12}}, es.gaps(5, 12))
	all, inMemory, spilled := es.bytes()
	assert.Equal(t, [3]int64{8, 8, 0}, [3]int64{all, inMemory, spilled})
}

// Runs of zeros merge with runs of zeros only, and count as saved bytes.
func TestExtentsKeepZerosApart(t *testing.T) {
	var es extents
	es.add(extent{off: 10, n: 5})
	es.add(extent{off: 20, n: 5})
	es.add(extent{off: 15, n: 5})
	assert.Equal(t, extents{{off: 10, n: 15}}, es, "touching runs of zeros merge")
	es.add(run(25, "ab"))
	es.add(run(8, "xy"))
	assert.Equal(t, extents{run(8, "xy"), {off: 10, n: 15}, run(25, "ab")}, es, "data does not merge with zeros")
	assert.Equal(t, [][2]int64{{0, 8}, {27, 30}}, es.gaps(0, 30))
	all, inMemory, spilled := es.bytes()
	assert.Equal(t, [3]int64{19, 4, 0}, [3]int64{all, inMemory, spilled})
}

// Runs in memory merge up to maxMemoryRun bytes, and no further.
func TestExtentsBoundRunsInMemory(t *testing.T) {
	var es extents
	half := maxMemoryRun / 2
	for i := range 5 {
		es.add(extent{off: int64(i * half), n: int64(half), data: make([]byte, half)})
	}
	assert.Len(t, es, 3)
	for _, e := range es {
		assert.LessOrEqual(t, e.n, int64(maxMemoryRun))
	}
	assert.Equal(t, [][2]int64{{5 * int64(half), 6 * int64(half)}}, es.gaps(0, 6*int64(half)))
}
