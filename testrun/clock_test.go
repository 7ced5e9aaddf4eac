package testrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/db"
)

// The nodes start under a fake clock when the run may use the faketime
// strategy: asked for, or auto for a system without hooks, and only when
// a family that bends clocks runs.
func TestFakeClockConfig(t *testing.T) {
	nodes := []db.Node{{Name: "n1", Addr: "127.0.0.11"}}
	built := func(o Options, system string) (bool, int) {
		var fake bool
		calls := 0
		d, err := o.fakeClockConfig(db.Config{Nodes: nodes}, func(cfg db.Config) (db.DB, error) {
			calls++
			fake = cfg.Faketime
			return cluster.Open(system, cfg)
		})
		require.NoError(t, err)
		require.NotNil(t, d)
		return fake, calls
	}
	for _, c := range []struct {
		strategy, system string
		nemesis          []string
		fake             bool
	}{
		{"", "etcd", nil, true},                             // auto, no hooks, the default mix
		{ClockAuto, "chaos-node", nil, false},               // auto, hooks
		{"faketime", "chaos-node", []string{"clock"}, true}, // asked for
		{"hook", "etcd", nil, false},
		{"system", "etcd", nil, false},
		{"", "etcd", []string{"partition", "kill"}, false}, // nothing bends clocks
		{"", "etcd", []string{"lease"}, true},
		{"", "etcd", []string{"all"}, true},
	} {
		fake, _ := built(Options{ClockStrategy: c.strategy, Nemesis: c.nemesis}, c.system)
		assert.Equal(t, c.fake, fake, "%+v", c)
	}
}

func TestValidateClockStrategies(t *testing.T) {
	for _, s := range []string{"", ClockAuto, "hook", "faketime", "system"} {
		o := validOptions()
		o.ClockStrategy = s
		o.Nodes = []string{"h1", "h2", "h3"}
		assert.NoError(t, o.Prepare(), s)
	}
	o := validOptions()
	o.ClockStrategy = "ntp"
	assert.EqualError(t, o.Prepare(), `bad option: --clock-strategy "ntp": want auto, hook, vdso, faketime or system`)
}

// validOptions are options Prepare accepts.
func validOptions() Options {
	return Options{DB: "chaos-node", Workload: "register", ReadConsistency: ReadLinearizable, Keys: 1, Concurrency: "2n",
		TimeLimit: time.Second, TestCount: 1, NemesisInterval: time.Second, Store: "store"}
}

// Complete is the one place defaults are filled; Validate only checks,
// and refuses options whose defaults were never filled.
func TestValidateOnlyValidates(t *testing.T) {
	o := validOptions()
	o.RequestTimeout, o.Recovery, o.Name = 0, 0, ""
	assert.ErrorContains(t, o.Validate(), "the options' defaults are not filled in")
	require.NoError(t, o.Complete())
	assert.Equal(t, time.Second, o.RequestTimeout)
	assert.Positive(t, o.Recovery)
	assert.Equal(t, "chaos-node-register-all", o.Name)
	before := o
	require.NoError(t, o.Validate())
	assert.Equal(t, before, o, "Validate changed the options")

	o = validOptions()
	o.Recovery = -time.Second
	require.NoError(t, o.Complete())
	assert.Equal(t, -time.Second, o.Recovery, "a negative bound is left for Validate to refuse")
	assert.EqualError(t, o.Validate(), "bad option: --request-timeout and --recovery must not be negative")
}
