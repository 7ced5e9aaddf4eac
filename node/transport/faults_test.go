package transport

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFaultsValidate(t *testing.T) {
	require.NoError(t, Faults{}.Validate())
	require.NoError(t, Faults{Drop: true, Loss: 1, Duplicate: 1, Reorder: 1, Delay: 30 * time.Second, Jitter: 30 * time.Second}.Validate())
	for name, f := range map[string]Faults{
		"loss above 1":      {Loss: 1.01},
		"negative dup":      {Duplicate: -0.1},
		"NaN reorder":       {Reorder: math.NaN()},
		"negative delay":    {Delay: -time.Millisecond},
		"negative jitter":   {Jitter: -time.Millisecond},
		"delay too long":    {Delay: MaxFaultDelay + 1},
		"delay+jitter long": {Delay: MaxFaultDelay, Jitter: 1},
	} {
		require.Error(t, f.Validate(), name)
	}
}

func TestSetFaultsStoresPerPeerAndAllPeerEntries(t *testing.T) {
	cfg := validConfig()
	cfg.Peers[3] = "127.0.0.1:3"
	cfg.Rand = rand.New(rand.NewPCG(1, 1))
	tr, err := New(cfg)
	require.NoError(t, err)
	defer tr.Close()

	all := Faults{Loss: 0.1}
	two := Faults{Drop: true}
	require.NoError(t, tr.SetFaults(0, all))
	require.NoError(t, tr.SetFaults(2, two))
	require.Equal(t, map[uint64]Faults{0: all, 2: two}, tr.Faults())
	ft := *tr.faults.Load()
	require.Equal(t, two, ft.forPeer(2), "a peer's own entry wins entirely")
	require.Equal(t, all, ft.forPeer(3))

	tr.Faults()[3] = two
	require.NotContains(t, tr.Faults(), uint64(3), "Faults returns a copy")

	require.NoError(t, tr.SetFaults(2, Faults{}))
	require.Equal(t, map[uint64]Faults{0: all}, tr.Faults(), "zero Faults removes the entry")
	tr.ClearFaults()
	require.Empty(t, tr.Faults())
}

func TestSetFaultsRejectsBadRequests(t *testing.T) {
	tr, err := New(validConfig()) // no Rand
	require.NoError(t, err)
	defer tr.Close()
	require.ErrorContains(t, tr.SetFaults(9, Faults{Drop: true}), "unknown peer 9")
	require.Error(t, tr.SetFaults(2, Faults{Loss: 2}))
	require.ErrorIs(t, tr.SetFaults(2, Faults{Loss: 0.5}), ErrNoRand)
	require.ErrorIs(t, tr.SetFaults(0, Faults{Delay: time.Millisecond, Jitter: time.Millisecond}), ErrNoRand)
	require.NoError(t, tr.SetFaults(2, Faults{Drop: true, Delay: time.Millisecond}), "deterministic faults need no Rand")
}

func TestSendDropsWithoutBlocking(t *testing.T) {
	cfg := validConfig()
	cfg.Peers[3] = "127.0.0.1:3"
	cfg.QueueLen = 100
	tr, err := New(cfg) // not started: nothing drains the queues
	require.NoError(t, err)
	defer tr.Close()
	require.NoError(t, tr.SetFaults(3, Faults{Drop: true}))

	tr.Send(heartbeats(1, 2, 0, 1000))
	tr.Send(heartbeats(1, 3, 0, 10))
	tr.Send(heartbeats(1, 7, 0, 5))
	st := tr.Stats()
	require.Equal(t, uint64(900), st.Peers[2].Dropped, "beyond QueueLen")
	require.Equal(t, uint64(10), st.Peers[3].Dropped, "Drop applies at Send")
	require.Equal(t, uint64(5), st.Unroutable)
}
