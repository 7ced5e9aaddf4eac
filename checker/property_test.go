package checker

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

func smallWorkload(seed uint64) simConfig {
	return simConfig{seed: seed, ops: 300, keys: 4, clients: 8, infoRate: 0.05, failRate: 0.05, casRate: 0.3, nemesis: true}
}

func seeds(t *testing.T) int {
	if testing.Short() {
		return 20
	}
	return 200
}

// Histories of a correct register are linearizable; changing what one read
// returned, to a value nobody wrote or to one certainly overwritten before
// the read began, makes them not.
func TestSimulatedRegisterHistories(t *testing.T) {
	stale := 0
	for seed := range uint64(seeds(t)) {
		h := simulate(smallWorkload(seed))
		require.NoError(t, history.Validate(h), "seed %d", seed)
		valid, d := checkLinearizable(t, h, LinearizableOptions{Timeout: time.Minute})
		require.Equal(t, Valid, valid, "seed %d: %+v", seed, d)

		rng := rand.New(rand.NewPCG(seed, 1))
		reads := okReads(h)
		require.NotEmpty(t, reads)
		r := reads[rng.IntN(len(reads))]
		mutated := alter(h, r, "-1") // writes are positive: nobody wrote -1
		valid, d = checkLinearizable(t, mutated, LinearizableOptions{Timeout: time.Minute})
		require.Equal(t, Invalid, valid, "seed %d: read at %d altered to -1", seed, r.Invoke)
		require.Equal(t, []string{h[r.Invoke].Key}, d.InvalidKeys)

		if r, v, ok := staleCandidate(h, rng); ok {
			stale++
			valid, _ = checkLinearizable(t, alter(h, r, v), LinearizableOptions{Timeout: time.Minute})
			require.Equal(t, Invalid, valid, "seed %d: read at %d altered to overwritten %s", seed, r.Invoke, v)
		}
	}
	assert.Greater(t, stale, seeds(t)/2, "most histories offer a stale value to read")
}

func okReads(h history.History) []history.Pair {
	var reads []history.Pair
	for _, p := range h.Pairs() {
		if h[p.Invoke].F == "read" && h.Outcome(p) == history.OK && !p.Open() {
			reads = append(reads, p)
		}
	}
	return reads
}

// alter returns a copy of h in which the read r returned value.
func alter(h history.History, r history.Pair, value string) history.History {
	m := append(history.History(nil), h...)
	m[r.Complete].Value = []byte(value)
	return m
}

// staleCandidate finds a successful read r and a value v of its key such
// that v's write was acknowledged, another write or cas of the key began
// after that and was acknowledged before r began: reading v is then
// certainly stale.
func staleCandidate(h history.History, rng *rand.Rand) (history.Pair, string, bool) {
	type write struct {
		call, ret int64
		value     string
	}
	byKey := make(map[string][]write)
	for _, p := range h.Pairs() {
		inv := &h[p.Invoke]
		if inv.F == "write" && h.Outcome(p) == history.OK {
			byKey[inv.Key] = append(byKey[inv.Key], write{inv.Time, h[p.Complete].Time, string(inv.Value)})
		}
	}
	reads := okReads(h)
	rng.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
	for _, r := range reads {
		call := h[r.Invoke].Time
		ws := byKey[h[r.Invoke].Key]
		for _, w := range ws {
			for _, s := range ws {
				if s.call > w.ret && s.ret < call && w.value != string(h[r.Complete].Value) {
					return r, w.value, true
				}
			}
		}
	}
	return history.Pair{}, "", false
}

// The rewrites of prepare keep every verdict: on random small histories,
// half of them damaged at random, porcupine says the same with and without
// them. And whenever prove claims a proof, porcupine agrees the key is not
// linearizable.
func TestPrepareAndProveAgreeWithPlainSearch(t *testing.T) {
	verdicts := map[porcupine.CheckResult]int{}
	proofs, dropped, tightened := 0, 0, 0
	for seed := range uint64(seeds(t) * 5) {
		cfg := simConfig{seed: seed, ops: 40, keys: 2, clients: 5, infoRate: 0.2, failRate: 0.05, casRate: 0.4}
		h := simulate(cfg)
		rng := rand.New(rand.NewPCG(seed, 2))
		if seed%2 == 1 {
			h = damage(h, rng)
		}
		rh, err := splitRegister(h)
		require.NoError(t, err)
		for _, key := range rh.sortedKeys() {
			plainOps := append([]regOp(nil), rh.keys[key]...)
			plain := make([]*regOp, len(plainOps))
			for i := range plainOps {
				plain[i] = &plainOps[i]
			}
			want := porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(plain, false), 10*time.Second)
			require.NotEqual(t, porcupine.Unknown, want, "seed %d: the plain search must finish", seed)
			prepared, n := prepare(rh.keys[key])
			dropped += n
			for _, op := range prepared {
				if op.info && !op.unbounded() {
					tightened++
				}
			}
			got := porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(prepared, false), 10*time.Second)
			require.Equal(t, want, got, "seed %d key %s", seed, key)
			verdicts[want]++
			if pr, ok := prove(prepared); ok {
				proofs++
				require.Equal(t, porcupine.Illegal, want, "seed %d key %s: %s", seed, key, pr.text)
			}
		}
	}
	assert.Positive(t, verdicts[porcupine.Ok])
	assert.Positive(t, verdicts[porcupine.Illegal])
	assert.Positive(t, proofs)
	assert.Positive(t, dropped, "rewrite 1 was exercised")
	assert.Positive(t, tightened, "rewrite 2 was exercised")
	t.Logf("verdicts %v, proofs %d, dropped %d, tightened %d", verdicts, proofs, dropped, tightened)
}

// damage changes what one successful read or cas observed to another value
// of the same key, or to nothing.
func damage(h history.History, rng *rand.Rand) history.History {
	values := make(map[string][]string)
	var targets []history.Pair
	for _, p := range h.Pairs() {
		inv := &h[p.Invoke]
		switch inv.F {
		case "write":
			values[inv.Key] = append(values[inv.Key], string(inv.Value))
		case "read":
			if h.Outcome(p) == history.OK && !p.Open() {
				targets = append(targets, p)
			}
		}
	}
	if len(targets) == 0 {
		return h
	}
	r := targets[rng.IntN(len(targets))]
	choices := append(values[h[r.Invoke].Key], "null")
	return alter(h, r, choices[rng.IntN(len(choices))])
}

func TestSimulationIsDeterministic(t *testing.T) {
	a, b := simulate(smallWorkload(7)), simulate(smallWorkload(7))
	assert.Equal(t, a, b)
	c := simulate(smallWorkload(8))
	assert.NotEqual(t, a, c)
	counts := OpCounts(a)
	assert.Equal(t, 300, counts.Invoke)
	assert.Positive(t, counts.Info)
	assert.Positive(t, counts.Fail)
	assert.Equal(t, counts.Invoke, counts.OK+counts.Fail+counts.Info)
	_, err := Linearizable(context.Background(), a, LinearizableOptions{})
	assert.NoError(t, err)
}
