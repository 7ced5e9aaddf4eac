package watch_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/checker/watch"
)

// plantCase is one planted violation: by a fault of the server or a plant
// after the run, and the one anomaly kind it must give.
type plantCase struct {
	name    string
	fault   fault
	plant   plant
	want    watch.Kind
	withKey bool // the anomaly names the planted key, not only the revision
}

var plantCases = []plantCase{
	{"drop an event", noFault, dropEvent, watch.LostEvent, true},
	{"duplicate a response", noFault, duplicate, watch.DuplicateEvent, true},
	{"reorder two responses", noFault, reorder, watch.OutOfOrder, true},
	{"split a revision", noFault, split, watch.SplitRevision, true},
	{"start too early on resume", noFault, earlyStart, watch.EventBeforeStart, true},
	{"start too late on resume", noFault, lateStart, watch.LateStart, true},
	{"serve a compacted start", skipRefusal, nil, watch.NotRefusedAfterCompaction, false},
	{"refuse before the compaction", refuseEarly, nil, watch.RefusedTooEarly, false},
	{"progress ahead of a pending event", progressAhead, nil, watch.ProgressAhead, true},
	{"wrong value", noFault, wrongValue, watch.WrongValue, true},
	{"wrong previous value", noFault, wrongPrev, watch.WrongPrevValue, true},
	{"stop before the final revision", stopEarly, nil, watch.NotCaughtUp, false},
}

// Each planted violation gives exactly its own anomaly kind, naming the
// planted watcher, session, revision and key, on each of the first three
// of seeds 1 to 40 that offer a place for it.
func TestPlanted(t *testing.T) {
	for _, c := range plantCases {
		t.Run(c.name, func(t *testing.T) {
			done := 0
			for seed := uint64(1); seed <= 40 && done < 3; seed++ {
				h, opts, p := simulate(seed, 300, c.fault)
				if c.plant != nil {
					p = c.plant(&h)
				}
				if !p.ok {
					continue
				}
				res := watch.Check(h, opts)
				msg := fmt.Sprintf("seed %d, planted %+v:\n%s", seed, p, explainAll(res))
				require.Equal(t, watch.Invalid, res.Valid, msg)
				require.Equal(t, []watch.Kind{c.want}, res.Kinds, msg)
				require.True(t, names(res, p, c.withKey), msg)
				done++
			}
			require.Equal(t, 3, done, "too few seeds offered a place to plant %s", c.name)
		})
	}
}

// names reports whether some anomaly names the planted place.
func names(res watch.Result, p planted, withKey bool) bool {
	for _, a := range res.Anomalies {
		if a.Watcher != p.watcher || a.Session != p.session {
			continue
		}
		if p.rev != 0 && a.Revision != p.rev {
			continue
		}
		if !withKey || a.Key == p.key {
			return true
		}
	}
	return false
}
