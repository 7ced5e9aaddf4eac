package nemesis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/eventlog"
	"chaos/nemesis/hostcmd"
)

// The fakes of the targeted faults' tests: five chaos-nodes whose hosts
// log every command and whose hooks log every request into one
// transcript, roles that a script changes as the sequence's fake clock
// advances, and event logs the script writes.

// seqFixture is a cluster under a script. Its clock starts at 0 and moves
// only when the sequence waits; after each wait, script runs with the
// time elapsed and may change the leader, the states and the events.
type seqFixture struct {
	t   *testing.T
	c   *Cluster
	log *netLog
	d   *liveDB

	mu      sync.Mutex
	elapsed time.Duration
	leader  string
	states  map[string]db.NodeState
	events  map[string][]eventlog.Event
	script  func(fx *seqFixture, elapsed time.Duration)
}

func newSeqFixture(t *testing.T) *seqFixture {
	fx := &seqFixture{t: t, log: &netLog{}, leader: "n3", states: map[string]db.NodeState{},
		events: map[string][]eventlog.Event{}}
	hooks := newNetHooks(t, fx.log, fiveNodes)
	fx.d = &liveDB{DB: &db.ChaosNode{Binary: "/build/chaos", Upload: true, Layout: db.DefaultLayout(), Nodes: fiveNodes},
		silent: map[string]bool{}}
	fx.c = &Cluster{Nodes: fiveNodes, Remotes: map[string]control.Remote{}, DB: fx.d, Hooks: hooks.hooks(),
		Leader: fx.leaderNow, States: fx.statesNow, Events: fx.eventsNow, Write: fx.write, Timing: chaosNodeTiming()}
	for _, n := range fiveNodes {
		fx.c.Remotes[n.Name] = fx.log.Remote(n.Name, seqAnswer(""))
	}
	for _, n := range fiveNodes {
		fx.states[n.Name] = db.NodeState{Role: "follower", Term: 4, Leader: "n3", Commit: 90, LastIndex: 90}
	}
	fx.states["n3"] = db.NodeState{Role: RoleLeader, Term: 4, Leader: "n3", Commit: 90, LastIndex: 95}
	return fx
}

// pace is the fixture's clock, to give a sequence as its Pace.
func (fx *seqFixture) pace() Pace {
	return Pace{Now: fx.now, Wait: func(ctx context.Context, d time.Duration) error {
		fx.mu.Lock()
		fx.elapsed += d
		elapsed, script := fx.elapsed, fx.script
		fx.mu.Unlock()
		if script != nil {
			script(fx, elapsed)
		}
		return ctx.Err()
	}}
}

func (fx *seqFixture) now() time.Time {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return time.Unix(0, 0).Add(fx.elapsed)
}

func (fx *seqFixture) leaderNow(context.Context) (string, error) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if fx.leader == "" {
		return "", errors.New("no node reports a leader")
	}
	return fx.leader, nil
}

func (fx *seqFixture) statesNow(context.Context) (map[string]db.NodeState, error) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	out := map[string]db.NodeState{}
	for n, s := range fx.states {
		if up, _ := fx.upLocked(n); up {
			out[n] = s
		}
	}
	return out, nil
}

func (fx *seqFixture) eventsNow(_ context.Context, node string) ([]eventlog.Event, error) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]eventlog.Event{}, fx.events[node]...), nil
}

// chaosNodeTiming is chaos-node's timing, as chaos run starts it.
func chaosNodeTiming() db.Timing {
	return db.Timing{Heartbeat: 50 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond}
}

// write is the cluster's client write: it logs the write into the
// transcript.
func (fx *seqFixture) write(_ context.Context, node, key string, value int64) error {
	fx.log.Note(node, fmt.Sprintf("client write %s=%d", key, value))
	return nil
}

// upLocked reports whether node's process answers (liveDB's view).
func (fx *seqFixture) upLocked(node string) (bool, error) {
	err := fx.d.Up(context.Background(), db.Node{Name: node})
	return err == nil, err
}

// set changes the fixture under its lock.
func (fx *seqFixture) set(f func()) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	f()
}

// vote appends a vote to node's event log.
func (fx *seqFixture) vote(node, candidate string, term uint64) {
	fx.events[node] = append(fx.events[node], eventlog.Event{Node: node, Event: eventlog.KindVote, For: candidate, Term: term})
}

// transcript is every command and hook request since the last call, then
// the op as the history would carry it.
func (fx *seqFixture) transcript(title string, op Op, err error) string {
	fx.t.Helper()
	out := "== " + title + "\n" + fx.log.take()
	if err != nil {
		out += "error: " + err.Error() + "\n"
	}
	if op.F == "" {
		return out + "=> (no op)\n"
	}
	return out + netOpLine(fx.t, op)
}

// seqAnswer answers as the hosts of a seqFixture do: the network probe as
// this machine (no netem), a command that contains fail (when not "")
// with exit 1, every other call with success.
func seqAnswer(fail string) remotetest.Answer {
	return func(c remotetest.Call) (control.Result, error) {
		switch {
		case fail != "" && strings.Contains(c.Cmd, fail):
			return netFail(1, "canned failure"), nil
		case c.Cmd == hostcmd.NetProbeScript:
			return netOK(netProbeNoNetem), nil
		}
		return control.Result{}, nil
	}
}

// requireHealed fails unless err is nil: the fault's Stop or Heal undid
// everything it could.
func requireHealed(t *testing.T, err error) {
	t.Helper()
	require.NoError(t, err)
}
