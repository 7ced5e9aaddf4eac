package watch_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/checker/watch"
)

// explainAll renders every anomaly, for failure messages.
func explainAll(res watch.Result) string {
	var b strings.Builder
	for _, a := range res.Anomalies {
		b.WriteString(a.Explain())
		b.WriteByte('\n')
	}
	return b.String()
}

// coverage counts what the double's histories exercised, so a test can
// show the valid runs were not trivially valid.
type coverage struct {
	refusals, midStreamCancels, progress, multiKey, deletes, fromNow, resumed, unacked int
}

func (c *coverage) add(h watch.History, opts watch.Options) {
	acked := map[int64]bool{}
	for _, w := range h.Writes {
		acked[w.Revision] = true
		if w.Delete {
			c.deletes++
		}
	}
	c.unacked += int(opts.FinalRevision) - len(acked)
	for _, s := range h.Sessions {
		if s.StartRevision == 0 {
			c.fromNow++
		} else if s.ID > 1 {
			c.resumed++
		}
		for i, r := range s.Responses {
			switch {
			case r.CompactRevision > 0 && i == 0:
				c.refusals++
			case r.CompactRevision > 0:
				c.midStreamCancels++
			case r.ProgressNotify:
				c.progress++
			}
			for j := 1; j < len(r.Events); j++ {
				if r.Events[j].Revision == r.Events[j-1].Revision {
					c.multiKey++
				}
			}
		}
	}
}

// The double's correct histories are valid, on many seeds, and between
// them they exercise every behaviour the checker judges.
func TestDoubleValid(t *testing.T) {
	var cov coverage
	for seed := uint64(1); seed <= 40; seed++ {
		h, opts, _ := simulate(seed, 300, noFault)
		res := watch.Check(h, opts)
		require.Equal(t, watch.Valid, res.Valid, "seed %d:\n%s", seed, explainAll(res))
		require.Empty(t, res.Anomalies)
		require.Positive(t, res.Stats.Obligations)
		cov.add(h, opts)
	}
	t.Logf("coverage: %+v", cov)
	for name, n := range map[string]int{"refusals": cov.refusals, "mid-stream cancels": cov.midStreamCancels,
		"progress": cov.progress, "multi-key revisions": cov.multiKey, "deletes": cov.deletes,
		"from-now sessions": cov.fromNow, "resumed sessions": cov.resumed, "unacknowledged revisions": cov.unacked} {
		require.Positive(t, n, name)
	}
}

// The same seed gives the same history and the same result.
func TestDeterministic(t *testing.T) {
	h1, o1, _ := simulate(7, 200, noFault)
	h2, o2, _ := simulate(7, 200, noFault)
	require.Equal(t, h1, h2)
	require.Equal(t, watch.Check(h1, o1), watch.Check(h2, o2))
}
