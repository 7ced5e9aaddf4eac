package checker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// planter plants one kind of anomaly in a register history; false when the
// history offers no place for it.
type planter func(h history.History, rng *rand.Rand) (history.History, bool)

// anomalies are the kinds the differential test plants, by name.
func anomalies() map[string]planter {
	return map[string]planter{
		"none":                     func(h history.History, _ *rand.Rand) (history.History, bool) { return h, true },
		"stale read":               plantStale,
		"lost write":               plantEmptyAfterWrite,
		"failed cas took effect":   plantFailedCasSeen,
		"value never written":      plantNeverWritten,
		"cas chain broken":         plantCasFromOtherValue,
		"unknown write seen early": plantSeenBeforeInvoke,
		"random read":              func(h history.History, rng *rand.Rand) (history.History, bool) { return damage(h, rng), true },
	}
}

func plantStale(h history.History, rng *rand.Rand) (history.History, bool) {
	r, v, ok := staleCandidate(h, rng)
	if !ok {
		return nil, false
	}
	return alter(h, r, v), true
}

// plantEmptyAfterWrite makes a read after an acknowledged write return
// nothing: the write was lost.
func plantEmptyAfterWrite(h history.History, rng *rand.Rand) (history.History, bool) {
	return plantRead(h, rng, func(read history.Pair, p history.Pair) (string, bool) {
		inv := &h[p.Invoke]
		return "null", inv.F == history.FWrite && h.Outcome(p) == history.OK && h[p.Complete].Time < h[read.Invoke].Time
	})
}

// plantFailedCasSeen makes a read invoked after a failed cas return the
// value the cas would have written.
func plantFailedCasSeen(h history.History, rng *rand.Rand) (history.History, bool) {
	return plantRead(h, rng, func(read history.Pair, p history.Pair) (string, bool) {
		inv := &h[p.Invoke]
		if inv.F != history.FCAS || h.Outcome(p) != history.Fail || inv.Time > h[read.Complete].Time {
			return "", false
		}
		_, to, err := casArgs(inv.Value)
		return strconv.FormatInt(to, 10), err == nil
	})
}

func plantNeverWritten(h history.History, rng *rand.Rand) (history.History, bool) {
	reads := okReads(h)
	if len(reads) == 0 {
		return nil, false
	}
	return alter(h, reads[rng.IntN(len(reads))], "-1"), true
}

// plantSeenBeforeInvoke makes a read return the value of a write of
// unknown outcome invoked only after the read returned.
func plantSeenBeforeInvoke(h history.History, rng *rand.Rand) (history.History, bool) {
	return plantRead(h, rng, func(read history.Pair, p history.Pair) (string, bool) {
		inv := &h[p.Invoke]
		return string(inv.Value), inv.F == history.FWrite && h.Outcome(p) == history.Info && inv.Time > h[read.Complete].Time
	})
}

// plantRead alters a random successful read to the value pick gives for
// some op of its key, trying ops in random order.
func plantRead(h history.History, rng *rand.Rand, pick func(read, p history.Pair) (string, bool)) (history.History, bool) {
	reads := okReads(h)
	pairs := h.Pairs()
	rng.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
	rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	for _, read := range reads {
		for _, p := range pairs {
			if h[p.Invoke].Key != h[read.Invoke].Key {
				continue
			}
			if v, ok := pick(read, p); ok {
				return alter(h, read, v), true
			}
		}
	}
	return nil, false
}

// plantCasFromOtherValue makes a successful cas expect another value of its
// key than the one it replaced.
func plantCasFromOtherValue(h history.History, rng *rand.Rand) (history.History, bool) {
	values := make(map[string][]int64)
	var cases []history.Pair
	for _, p := range h.Pairs() {
		inv := &h[p.Invoke]
		switch {
		case inv.F == history.FWrite:
			v, err := strconv.ParseInt(string(inv.Value), 10, 64)
			if err == nil {
				values[inv.Key] = append(values[inv.Key], v)
			}
		case inv.F == history.FCAS && h.Outcome(p) == history.OK && !p.Open():
			cases = append(cases, p)
		}
	}
	rng.Shuffle(len(cases), func(i, j int) { cases[i], cases[j] = cases[j], cases[i] })
	for _, p := range cases {
		from, to, _ := casArgs(h[p.Invoke].Value)
		for _, v := range values[h[p.Invoke].Key] {
			if v != from {
				m := append(history.History(nil), h...)
				value := []byte(fmt.Sprintf("[%d,%d]", v, to))
				m[p.Invoke].Value, m[p.Complete].Value = value, value
				return m, true
			}
		}
	}
	return nil, false
}

// agree checks every key of h both ways: writeOrder against porcupine's
// search, and, when writeOrder finds a key not linearizable, porcupine on
// the ops its witness names. It returns the verdicts porcupine gave. Both
// get the ops prepare leaves (TestPrepareAndProveAgreeWithPlainSearch
// holds that prepare keeps porcupine's verdict): unprepared, a few of
// these histories take porcupine minutes.
func agree(t testing.TB, h history.History, what string) []porcupine.CheckResult {
	rh, err := splitRegister(h)
	require.NoError(t, err, what)
	var verdicts []porcupine.CheckResult
	for _, key := range rh.sortedKeys() {
		prepared, _ := prepare(rh.keys[key])
		want := porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(prepared, false), 5*time.Second)
		verdicts = append(verdicts, want)
		wit, unique := writeOrder(prepared)
		require.True(t, unique, "%s: the simulated values are unique", what)
		if want == porcupine.Unknown {
			continue
		}
		require.Equal(t, want == porcupine.Ok, wit == nil, "%s key %s: porcupine %s, write order: %s", what, key, want, witnessText(wit))
		if wit != nil {
			core := wit.closure(prepared)
			got := porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(core, false), 5*time.Second)
			require.Equal(t, porcupine.Illegal, got, "%s key %s: the witness's %d ops: %s", what, key, len(core), witnessText(wit))
		}
	}
	return verdicts
}

// diffConfig draws the shape of a small history from seed: 1 or 2 keys,
// 2 to 12 clients, up to 40% of ops of unknown outcome.
func diffConfig(seed uint64) simConfig {
	rng := rand.New(rand.NewPCG(seed, 7))
	return simConfig{seed: seed, ops: 10 + rng.IntN(60), keys: 1 + rng.IntN(2), clients: 2 + rng.IntN(11),
		infoRate: rng.Float64() * 0.4, failRate: rng.Float64() * 0.1, casRate: rng.Float64() * 0.5}
}

// The write order decides exactly as porcupine does, on thousands of small
// histories, correct and with each kind of anomaly planted; and every
// witness it gives is a set of ops porcupine finds not linearizable.
func TestWriteOrderAgreesWithSearch(t *testing.T) {
	n := uint64(2000)
	if testing.Short() {
		n = 200
	}
	planted := map[string]int{}
	verdicts := map[porcupine.CheckResult]int{}
	for seed := range n {
		h := simulate(diffConfig(seed))
		for name, plant := range anomalies() {
			m, ok := plant(h, rand.New(rand.NewPCG(seed, 11)))
			if !ok {
				continue
			}
			planted[name]++
			for _, v := range agree(t, m, fmt.Sprintf("seed %d, %s", seed, name)) {
				verdicts[v]++
			}
		}
	}
	t.Logf("planted %v; porcupine's verdicts %v", planted, verdicts)
	for name := range anomalies() {
		assert.Greater(t, planted[name], int(n)/10, "%s planted in few histories", name)
	}
	assert.Less(t, verdicts[porcupine.Unknown], len(planted), "porcupine decided nearly every key")
	assert.Greater(t, verdicts[porcupine.Illegal], int(n))
	assert.Greater(t, verdicts[porcupine.Ok], int(n))
}

// Through the whole check: AlgorithmAuto and AlgorithmSearch give the same
// verdict and invalid keys, and say who decided.
func TestLinearizableAutoAgreesWithSearch(t *testing.T) {
	for seed := range uint64(40) {
		cfg := smallWorkload(seed)
		cfg.infoRate = 0.02
		h := simulate(cfg)
		if seed%2 == 1 {
			h = damage(h, rand.New(rand.NewPCG(seed, 3)))
		}
		auto, err := Linearizable(context.Background(), h, LinearizableOptions{})
		require.NoError(t, err)
		search, err := Linearizable(context.Background(), h, LinearizableOptions{Algorithm: AlgorithmSearch, Timeout: time.Minute})
		require.NoError(t, err)
		a, s := auto.Details.(*LinearizableDetails), search.Details.(*LinearizableDetails)
		require.Equal(t, search.Valid, auto.Valid, "seed %d", seed)
		assert.Equal(t, s.InvalidKeys, a.InvalidKeys, "seed %d", seed)
		assert.Equal(t, map[string]int{AlgorithmWriteOrder: cfg.keys}, a.DecidedBy, "seed %d", seed)
		assert.Equal(t, AlgorithmAuto, a.Algorithm)
		for _, f := range a.Failures {
			assert.Equal(t, AlgorithmWriteOrder, f.DecidedBy)
			assert.NotEmpty(t, f.Ops)
		}
	}
}

// FuzzWriteOrderAgreesWithSearch is TestWriteOrderAgreesWithSearch over
// histories the fuzzer shapes:
//
//	go test ./checker -run '^$' -fuzz FuzzWriteOrderAgreesWithSearch -fuzztime 10m
func FuzzWriteOrderAgreesWithSearch(f *testing.F) {
	f.Add(uint64(1), uint8(5), uint8(40), uint8(30), uint8(40), uint8(0))
	f.Add(uint64(2), uint8(12), uint8(60), uint8(80), uint8(10), uint8(3))
	names := []string{"none", "stale read", "lost write", "failed cas took effect", "value never written",
		"cas chain broken", "unknown write seen early", "random read"}
	f.Fuzz(func(t *testing.T, seed uint64, clients, ops, infoPct, casPct, kind uint8) {
		cfg := simConfig{seed: seed, ops: 1 + int(ops)%80, keys: 1, clients: 1 + int(clients)%16,
			infoRate: float64(infoPct%101) / 250, failRate: 0.05, casRate: float64(casPct%101) / 100}
		name := names[int(kind)%len(names)]
		m, ok := anomalies()[name](simulate(cfg), rand.New(rand.NewPCG(seed, 11)))
		if ok {
			agree(t, m, fmt.Sprintf("%+v, %s", cfg, name))
		}
	})
}

// Histories no search decides: one key, 50 to 500 clients, up to 30% of ops
// of unknown outcome. The write order decides them, valid, and invalid
// once one stale read is planted.
func TestWriteOrderDecidesHotKeys(t *testing.T) {
	for _, c := range []struct {
		clients int
		info    float64
	}{{50, 0.05}, {50, 0.3}, {200, 0.1}, {500, 0.3}} {
		t.Run(fmt.Sprintf("%d clients, %.0f%% unknown", c.clients, c.info*100), func(t *testing.T) {
			cfg := simConfig{seed: uint64(c.clients), ops: 20_000, keys: 1, clients: c.clients, infoRate: c.info,
				failRate: 0.01, casRate: 0.2, nemesis: true}
			h := simulate(cfg)
			valid, d := checkLinearizable(t, h, LinearizableOptions{})
			require.Equal(t, Valid, valid, "%+v", d)
			assert.Equal(t, map[string]int{AlgorithmWriteOrder: 1}, d.DecidedBy)

			r, v, ok := staleCandidate(h, rand.New(rand.NewPCG(1, 2)))
			require.True(t, ok)
			valid, d = checkLinearizable(t, alter(h, r, v), LinearizableOptions{VisualizationDir: t.TempDir()})
			require.Equal(t, Invalid, valid)
			require.Len(t, d.Failures, 1)
			assert.NotEmpty(t, d.Failures[0].Visualization)
			assert.LessOrEqual(t, len(d.Failures[0].Ops), 4, "the witness is a handful of ops: %s", d.Failures[0].Explanation)
		})
	}
}
