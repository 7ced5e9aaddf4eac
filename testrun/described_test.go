package testrun

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
	"chaos/testrun/runrecord"
	"chaos/workload"
)

func describedOptions(db string) Options {
	return Options{DB: db, Workload: "register", Keys: 10, ReadConsistency: ReadLinearizable, Concurrency: "2n",
		TimeLimit: time.Minute, TestCount: 1, NemesisInterval: 10 * time.Second, Store: "store"}
}

// --db PATH.yaml loads the description while the options are validated:
// its name names the test, and what it cannot do is refused there.
func TestValidateLoadsDescriptions(t *testing.T) {
	o := describedOptions("../examples/systems/etcd.yaml")
	require.NoError(t, o.Prepare())
	assert.Equal(t, "etcd-register-all", o.Name)
	require.NotNil(t, o.system)

	o = describedOptions("../examples/systems/etcd.yaml")
	o.Bugs = []string{"stale-read"}
	err := o.Prepare()
	require.ErrorIs(t, err, ErrUsage)
	assert.Contains(t, err.Error(), "etcd.yaml:15: --bug plants bugs through {bug_flags}")

	o = describedOptions("../examples/systems/chaos-node.yaml")
	o.Bugs = []string{"stale-read"}
	require.NoError(t, o.Prepare(), "local mode runs described systems")
	assert.Equal(t, "chaos-node-register-all-bug-stale-read", o.Name)

	o = describedOptions("no-such.yaml")
	err = o.Prepare()
	require.ErrorIs(t, err, ErrUsage)
	assert.Contains(t, err.Error(), "no-such.yaml: cannot read the description")

	o = describedOptions("mysql")
	require.ErrorIs(t, o.Prepare(), ErrUsage)
}

type restartingClient struct{ restarts int }

func (c *restartingClient) Do(context.Context, workload.Op) history.Outcome {
	return history.Outcome{Type: history.OK}
}
func (c *restartingClient) Close() error  { return errors.New("unused") }
func (c *restartingClient) Restarts() int { return c.restarts }

type plainClient struct{}

func (plainClient) Do(context.Context, workload.Op) history.Outcome {
	return history.Outcome{Type: history.OK}
}
func (plainClient) Close() error { return nil }

// results.json's "clients" sums the restarts of every client made, and is
// there only for clients that restart processes.
func TestClientsSummary(t *testing.T) {
	assert.Nil(t, clientsSummary(nil))
	made := []workload.Client{plainClient{}}
	assert.Nil(t, clientsSummary(made))
	made = append(made, &restartingClient{restarts: 2}, &restartingClient{restarts: 3})
	assert.Equal(t, &runrecord.ClientsSummary{Restarts: 5}, clientsSummary(made))
}

// The recovery period and bound: --recovery when given, else the one the
// system states (built-in systems and timing.recovery), else the default,
// advisory.
func TestValidateResolvesTheRecoveryBound(t *testing.T) {
	for _, c := range []struct {
		db       string
		given    time.Duration
		want     time.Duration
		advisory bool
	}{
		{db: "chaos-node", want: 5 * time.Second},
		{db: "chaos-node", given: 7 * time.Second, want: 7 * time.Second},
		{db: "../examples/systems/etcd.yaml", want: 5 * time.Second},
		{db: "../examples/systems/clockserver.yaml", want: DefaultRecovery, advisory: true},
		{db: "../examples/systems/clockserver.yaml", given: 20 * time.Second, want: 20 * time.Second},
	} {
		o := describedOptions(c.db)
		o.Recovery = c.given
		require.NoError(t, o.Prepare(), c.db)
		assert.Equal(t, c.want, o.Recovery, "%s, --recovery %v", c.db, c.given)
		assert.Equal(t, c.advisory, o.recoveryAdvisory, "%s, --recovery %v", c.db, c.given)
	}
}

// What a built-in system cannot do is its registry entry's facts
// (cluster.System's LocalMode and Bugs), and the refusals name the
// system: etcd runs on --nodes only and has no planted bugs.
func TestValidateRegistryFacts(t *testing.T) {
	o := describedOptions("etcd")
	err := o.Prepare()
	require.ErrorIs(t, err, ErrUsage)
	assert.EqualError(t, err, "bad option: --db etcd needs --nodes: local mode runs chaos-node only")

	o = describedOptions("etcd")
	o.Nodes, o.Bugs = []string{"10.0.0.11", "10.0.0.12", "10.0.0.13"}, []string{"stale-read"}
	assert.EqualError(t, o.Prepare(), "bad option: --bug plants bugs in chaos-node only, not in etcd")

	o = describedOptions("chaos-node")
	o.Bugs = []string{"stale-read"}
	require.NoError(t, o.Prepare(), "chaos-node runs in local mode, with planted bugs")
}
