package workload

import (
	"chaos/history"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
)

// The register workload's mix, in percent of operations.
const (
	registerReadPct  = 50
	registerWritePct = 30
	// The remaining 20% are cas.
)

// registerRecent is how many of a key's latest values a cas chooses its
// expected value from.
const registerRecent = 4

// Register generates the register workload over keys k0 .. k(keys-1):
// 50% reads, 30% writes and 20% cas, each on a key chosen uniformly.
//
// Every value a write or a cas puts is unique in the test (a shared counter
// from 1), so the checker can tell which write a read saw. A cas expects
// one of the last registerRecent values handed out for its key, so that a
// fair share of them succeed; a key that was never given a value has
// nothing to compare against, so its cas is replaced by a write.
type Register struct {
	keys []registerKey
	last atomic.Int64 // the last value handed out; 0 is never a value
}

// registerKey is one key's name and the values recently handed out for it.
type registerKey struct {
	name   string
	mu     sync.Mutex
	recent [registerRecent]int64
	count  int // values ever handed out for this key
}

// NewRegister returns a register generator over keys keys.
func NewRegister(keys int) (*Register, error) {
	if keys < 1 {
		return nil, fmt.Errorf("register workload: %d keys; it needs at least 1", keys)
	}
	r := &Register{keys: make([]registerKey, keys)}
	for i := range r.keys {
		r.keys[i].name = "k" + strconv.Itoa(i)
	}
	return r, nil
}

// Keys returns the key names, k0 first.
func (r *Register) Keys() []string {
	names := make([]string, len(r.keys))
	for i := range r.keys {
		names[i] = r.keys[i].name
	}
	return names
}

// Next returns a read, a write or a cas on a random key.
func (r *Register) Next(rng *rand.Rand) Op {
	k := &r.keys[rng.IntN(len(r.keys))]
	roll := rng.IntN(100)
	if roll < registerReadPct {
		return Op{F: history.FRead, Key: k.name}
	}
	cas := roll >= registerReadPct+registerWritePct
	// Draw before taking the lock so the rng sequence does not depend on
	// the key's state.
	pick := rng.IntN(registerRecent)
	v := r.last.Add(1)

	k.mu.Lock()
	defer k.mu.Unlock()
	var expected int64
	if n := min(k.count, registerRecent); cas && n > 0 {
		expected = k.recent[(k.count-1-pick%n)%registerRecent]
	}
	k.recent[k.count%registerRecent] = v
	k.count++
	if expected == 0 {
		return Op{F: history.FWrite, Key: k.name, Value: v}
	}
	return Op{F: history.FCAS, Key: k.name, Value: [2]int64{expected, v}}
}
