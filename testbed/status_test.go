package testbed

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatusOfARunningTestbed(t *testing.T) {
	fake := newFakeSystem()
	dir, st := upFake(t, fake, 3)
	fake.procs[st.Hosts[1].Pid].alive = false // n2 died

	got, statuses, err := Status(context.Background(), fake, dir)
	require.NoError(t, err)
	assert.Equal(t, st, got)
	require.Len(t, statuses, 3)
	for i, want := range []bool{true, false, true} {
		s := statuses[i]
		assert.Equal(t, st.Hosts[i], s.Host)
		assert.Equal(t, want, s.Running, s.Name)
		assert.Equal(t, want, s.Healthy(), s.Name)
	}
	assert.Equal(t, "SSH-2.0-OpenSSH_9.2p1 fake", statuses[0].Banner)
	assert.EqualError(t, statuses[1].Err, "dial tcp 10.77.0.12:22: connect: connection refused")
}

func TestStatusWithoutTestbed(t *testing.T) {
	fake := newFakeSystem()
	_, _, err := Status(context.Background(), fake, t.TempDir())
	assert.ErrorIs(t, err, ErrNotUp)
	assert.Empty(t, fake.calls)
}
