package checker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

func TestWriteOrderQuick(t *testing.T) {
	counts := map[porcupine.CheckResult]int{}
	for seed := range uint64(20000) {
		cfg := simConfig{seed: seed, ops: 60, keys: 1, clients: 8, infoRate: 0.3, failRate: 0.05, casRate: 0.4}
		h := simulate(cfg)
		rng := rand.New(rand.NewPCG(seed, 2))
		if seed%2 == 1 {
			h = damage(h, rng)
		}
		rh, err := splitRegister(h)
		require.NoError(t, err)
		for _, key := range rh.sortedKeys() {
			prepared, _ := prepare(rh.keys[key])
			want := porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(prepared, false), 10*time.Second)
			w, unique := writeOrder(prepared)
			require.True(t, unique)
			got := porcupine.Ok
			if w != nil {
				got = porcupine.Illegal
				cl := w.closure(prepared)
				require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(cl, false), 10*time.Second), "seed %d witness %s", seed, w.proof().text)
			}
			counts[want]++
			require.Equal(t, want, got, "seed %d key %s %v", seed, key, w)
		}
	}
	t.Log(counts)
}
