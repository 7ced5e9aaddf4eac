package bench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"chaos/history"
	"chaos/workload"
)

// Mix generates a benchmark's load: reads and blind writes over keys
// b0 .. b(keys-1), each on a key chosen uniformly, a read with
// probability readRatio. Every write puts a value unique in the run (a
// shared counter from 1), padded to width characters.
type Mix struct {
	keys      []string
	readRatio float64
	width     int
	last      atomic.Int64
}

// NewMix returns the mix; readRatio is in [0, 1], keys at least 1.
func NewMix(readRatio float64, keys, width int) (*Mix, error) {
	if readRatio < 0 || readRatio > 1 || readRatio != readRatio {
		return nil, fmt.Errorf("read ratio %v: want a fraction from 0 to 1", readRatio)
	}
	if keys < 1 {
		return nil, fmt.Errorf("%d keys: want at least 1", keys)
	}
	m := &Mix{keys: make([]string, keys), readRatio: readRatio, width: width}
	for i := range m.keys {
		m.keys[i] = "b" + strconv.Itoa(i)
	}
	return m, nil
}

// Next returns a read or a write; safe for concurrent use.
func (m *Mix) Next(rng *rand.Rand) workload.Op {
	key := m.keys[rng.IntN(len(m.keys))]
	if rng.Float64() < m.readRatio {
		return workload.Op{F: history.FRead, Key: key}
	}
	return workload.Op{F: history.FWrite, Key: key, Value: m.last.Add(1), Width: m.width}
}
