package campaign

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/nemesis"
)

// slowStart is a fault whose Start reports what the progress display sees
// while it runs, then ends with err.
type slowStart struct {
	nemesis.Fault
	during func() bool
	seen   bool
	err    error
}

func (s *slowStart) Start(context.Context, *nemesis.Cluster, *rand.Rand) (nemesis.Op, error) {
	s.seen = s.during()
	return nemesis.Op{}, s.err
}

// A fault counts as in effect while it starts (a targeted sequence runs
// for seconds inside its Start), and after, unless the start failed
// having done nothing.
func TestTrackedIsActiveWhileItStarts(t *testing.T) {
	for _, failed := range []bool{false, true} {
		f := &slowStart{Fault: &nemesis.Kill{}}
		if failed {
			f.err = errors.New("refused")
		}
		tr := &tracked{Fault: f}
		f.during = tr.isActive
		_, _ = tr.Start(context.Background(), nil, nil)
		require.True(t, f.seen, "in effect during its start")
		require.Equal(t, !failed, tr.isActive(), "after a start that failed: %v", failed)
	}
}
