package nemesis

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
)

// stuckDB is liveDB whose restarted nodes never come up: Start runs the
// real command and announces the node on started, but the node stays
// silent, as a process that never answers would.
type stuckDB struct {
	*liveDB
	started chan string
}

func (d *stuckDB) Start(ctx context.Context, r control.Remote, n db.Node) error {
	err := d.liveDB.DB.Start(ctx, r, n)
	d.started <- n.Name
	return err
}

// Issue 12: a kill whose restart cannot finish (the system never comes
// up) is cut short at the schedule's deadline (time-limit - recovery in a
// run), recorded as info with the reason, and retried by the heal, which
// is recorded at the deadline: the rest of the run is the recovery
// window. The clock is the test's, and nothing sleeps: the restart waits
// until the test moves the time to the deadline.
func TestScheduleHealsAtTheDeadlineWhenARestartCannotFinish(t *testing.T) {
	c, live, fakes := goldenCluster(fiveNodes[:3])
	d := &stuckDB{liveDB: live, started: make(chan string, 2)}
	c.DB = d
	fx := newScheduleFixture(t, 1)
	fx.s.Faults = []Fault{&Kill{Targets: []Target{TargetOne}, UpTimeout: time.Hour}}
	fx.s.Cluster = c
	// Every hold is 10 s: the kill at 1 s (an election timeout in), its
	// restart at 11 s.
	fx.s.Interval, fx.s.MinHold, fx.s.TimeLimit = 10*time.Second, 10*time.Second, 25*time.Second
	fx.s.StepTimeout = time.Hour
	fx.s.HealTimeout = 50 * time.Millisecond // the heal's restart cannot finish either

	done := make(chan error, 1)
	go func() { done <- fx.s.Run(context.Background()) }()
	var node string
	for node == "" { // fire the waits until the restart begins
		select {
		case w := <-fx.clock.waits:
			w.fire()
		case node = <-d.started: // ... and waits for the node to come up
		}
	}
	require.Equal(t, 11*time.Second, fx.clock.Now().Sub(time.Unix(1_000_000, 0)))
	fx.clock.advance(14 * time.Second) // to the deadline
	err := <-done

	wantHealErr := "heal kill: kill: " + node + ": not answering (cut short: the step took longer than 50ms)"
	require.EqualError(t, err, wantHealErr)
	assert.Equal(t, node, <-d.started, "the heal restarts the node again")
	ops := fx.rec.Ops()
	require.Len(t, ops, 3, "%v", nemesisOps(t, fx.rec))
	assert.Equal(t, "kill", ops[0].F)
	assert.Equal(t, int64(time.Second), ops[0].Time)
	assert.Equal(t, "stop-kill", ops[1].F)
	assert.JSONEq(t, `{"error":"kill: `+node+`: not answering (cut short: the schedule's deadline passed)","cut_short":true,`+
		`"op":"start","value":{"nodes":["`+node+`"]}}`, string(ops[1].Value))
	assert.Equal(t, int64(25*time.Second), ops[1].Time, "cut short at the deadline")
	assert.Equal(t, "heal", ops[2].F)
	assert.JSONEq(t, `{"error":"`+wantHealErr+`","faults":["kill"]}`, string(ops[2].Value))
	assert.Equal(t, int64(25*time.Second), ops[2].Time, "healed at the deadline")

	cmds := strings.Join(ran(fakes[node]), "\n")
	assert.Equal(t, 2, strings.Count(cmds, "kill -KILL"), "the kill, and the heal's before its restart")
	assert.Equal(t, 2, strings.Count(cmds, "setsid "), "the restart, and the heal's")
}

// At the end, the active faults stop in heal order (pause first, kill
// last), whatever their order in Faults; then every family heals, in
// Faults order.
func TestScheduleFinalStopsRunInHealOrder(t *testing.T) {
	fx := newScheduleFixture(t, 1, "kill", "clock", "partition", "pause")
	for _, f := range fx.faults {
		f.active = true
	}
	r := newScheduleRun(fx.s)
	r.active = []bool{true, true, true, true}
	require.NoError(t, r.finish(context.Background()))
	assert.Equal(t, []string{"stop pause", "stop partition", "stop clock", "stop kill",
		"heal kill", "heal clock", "heal partition", "heal pause"}, fx.log.all())
	ops := nemesisOps(t, fx.rec)
	assert.Equal(t, []string{"off-pause 0", "off-partition 0", "off-clock 0", "off-kill 0",
		`heal {"faults":["kill","clock","partition","pause"]}`}, ops)
}

// A schedule's deadline stops the loop even while a step is in flight,
// and no fault starts after it: a Start that hangs is cut short there.
func TestScheduleStartsNothingAfterTheDeadline(t *testing.T) {
	fx := newScheduleFixture(t, 1)
	hang := &hangingFault{entered: make(chan struct{}, 1)}
	fx.s.Faults = []Fault{hang}
	fx.s.TimeLimit = 15 * time.Second
	done := make(chan error, 1)
	go func() { done <- fx.s.Run(context.Background()) }()
	(<-fx.clock.waits).fire() // 1 s: the first start
	<-hang.entered
	fx.clock.advance(14 * time.Second)
	require.NoError(t, <-done)
	assert.Equal(t, []string{
		`start-hang {"cut_short":true,"error":"context canceled (cut short: the schedule's deadline passed)"}`,
		`heal {"faults":["hang"]}`,
	}, nemesisOps(t, fx.rec))
	assert.Equal(t, 1, hang.starts)
}

// hangingFault's Start blocks until its context ends, having done nothing.
type hangingFault struct {
	entered chan struct{}
	starts  int
}

func (h *hangingFault) Name() string                              { return "hang" }
func (h *hangingFault) Available(context.Context, *Cluster) error { return nil }
func (h *hangingFault) Stop(context.Context, *Cluster) (Op, error) {
	return Op{}, nil
}
func (h *hangingFault) Heal(context.Context, *Cluster) error { return nil }

func (h *hangingFault) Start(ctx context.Context, _ *Cluster, _ *rand.Rand) (Op, error) {
	h.starts++
	h.entered <- struct{}{}
	<-ctx.Done()
	return Op{}, ctx.Err()
}
