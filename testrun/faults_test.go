package testrun

import (
	"context"
	"errors"
	"fmt"
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

// Only the packet family runs with some of its parts missing; a targeted
// family whose delay no mechanism performs is left out, not run to fail.
func TestPartlyAvailableIsForPacketOnly(t *testing.T) {
	delay := &nemesis.PacketUnavailableError{Parts: []string{nemesis.PartDelay},
		Why: map[string]error{nemesis.PartDelay: errors.New("no netem")}}
	require.True(t, partlyAvailable("packet", delay))
	require.False(t, partlyAvailable(nemesis.VoteRestartFamily, fmt.Errorf("vote-restart: %w", delay)))
	require.False(t, partlyAvailable(nemesis.ElectionDelayFamily, fmt.Errorf("election-delay: %w", delay)))
	all := &nemesis.PacketUnavailableError{Parts: nemesis.UnreliableNetwork().Parts()}
	require.False(t, partlyAvailable("packet", all), "no part at all")
	require.False(t, partlyAvailable("packet", errors.New("needs at least 2 nodes")))
}
