package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// stepTime is a TimeSource driven by the test: every After is handed to
// the test on waits, and its time passes when the test fires it (or calls
// advance). AfterFunc's functions run, in the goroutine that moves the
// time, once it reaches theirs.
type stepTime struct {
	mu     sync.Mutex
	now    time.Time
	waits  chan stepWait
	timers []*stepTimer
}

type stepWait struct {
	d    time.Duration
	fire func()
}

type stepTimer struct {
	at time.Time
	f  func()
}

func newStepTime() *stepTime {
	return &stepTime{now: time.Unix(1_000_000, 0), waits: make(chan stepWait)}
}

func (s *stepTime) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

func (s *stepTime) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	s.waits <- stepWait{d: d, fire: func() { ch <- s.advance(d) }}
	return ch
}

func (s *stepTime) AfterFunc(d time.Duration, f func()) func() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &stepTimer{at: s.now.Add(d), f: f}
	s.timers = append(s.timers, t)
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		i := slices.Index(s.timers, t)
		if i >= 0 {
			s.timers = slices.Delete(s.timers, i, i+1)
		}
		return i >= 0
	}
}

// advance moves the time d on, runs the functions whose time has come, and
// returns the new time.
func (s *stepTime) advance(d time.Duration) time.Time {
	s.mu.Lock()
	s.now = s.now.Add(d)
	now := s.now
	var due []*stepTimer
	s.timers = slices.DeleteFunc(s.timers, func(t *stepTimer) bool {
		if t.at.After(now) {
			return false
		}
		due = append(due, t)
		return true
	})
	s.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	return now
}

// scriptFault is a fault family that records its calls in a shared log,
// fails when told to, and reports a second Start while active.
type scriptFault struct {
	name      string
	t         *testing.T
	log       *callLog
	active    bool
	startErr  error // Start fails with it, having done nothing
	partial   bool  // ... or having done something: it returns an Op
	stopErr   error
	healErr   error
	startSeen int
}

type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *callLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

func (f *scriptFault) Name() string                              { return f.name }
func (f *scriptFault) Available(context.Context, *Cluster) error { return nil }

func (f *scriptFault) Start(_ context.Context, _ *Cluster, rng *rand.Rand) (Op, error) {
	f.log.add("start " + f.name)
	if f.active {
		f.t.Errorf("%s: Start while active", f.name)
	}
	f.startSeen++
	if f.startErr != nil {
		if f.partial {
			f.active = true
			return Op{F: "on-" + f.name, Value: map[string]any{"n": f.startSeen}}, f.startErr
		}
		return Op{}, f.startErr
	}
	f.active = true
	return Op{F: "on-" + f.name, Value: map[string]any{"n": f.startSeen, "pick": rng.IntN(100)}}, nil
}

func (f *scriptFault) Stop(context.Context, *Cluster) (Op, error) {
	f.log.add("stop " + f.name)
	if !f.active {
		return Op{}, nil
	}
	f.active = false
	return Op{F: "off-" + f.name, Value: f.startSeen}, f.stopErr
}

func (f *scriptFault) Heal(context.Context, *Cluster) error {
	f.log.add("heal " + f.name)
	f.active = false
	return f.healErr
}

// scheduleFixture is a schedule over fake faults, a step clock and an
// in-memory history.
type scheduleFixture struct {
	s      *Schedule
	clock  *stepTime
	rec    *history.Recorder
	log    *callLog
	faults map[string]*scriptFault
}

func newScheduleFixture(t *testing.T, seed uint64, families ...string) *scheduleFixture {
	fx := &scheduleFixture{clock: newStepTime(), log: &callLog{}, faults: map[string]*scriptFault{}}
	start := fx.clock.Now()
	fx.rec = history.NewRecorder(nil, func() time.Duration { return fx.clock.Now().Sub(start) },
		history.RecorderOptions{PanicOnInvalid: true})
	t.Cleanup(func() { _ = fx.rec.Close() })
	var faults []Fault
	for _, name := range families {
		fx.faults[name] = &scriptFault{name: name, t: t, log: fx.log}
		faults = append(faults, fx.faults[name])
	}
	fx.s = &Schedule{Faults: faults, Interval: 10 * time.Second, Rng: seeded(seed),
		Recorder: fx.rec, Cluster: &Cluster{}, Time: fx.clock}
	return fx
}

// run runs the schedule, firing every wait until stop says to cancel
// instead; it returns the delays asked for and Run's error.
func (fx *scheduleFixture) run(t *testing.T, stop func(waits int) bool) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fx.s.Run(ctx) }()
	var delays []time.Duration
	for {
		select {
		case w := <-fx.clock.waits:
			delays = append(delays, w.d)
			if stop != nil && stop(len(delays)) {
				cancel()
				continue
			}
			w.fire()
		case err := <-done:
			return delays, err
		}
	}
}

// nemesisOps renders the history's ops as "f value" lines.
func nemesisOps(t *testing.T, rec *history.Recorder) []string {
	var out []string
	for _, op := range rec.Ops() {
		require.Equal(t, history.NemesisProcess, op.Process)
		out = append(out, op.F+" "+string(op.Value))
	}
	return out
}

// replay returns the families active after ops, checking on the way
// that no family is started while active. The fake faults' ops are
// on-<family> and off-<family>; errors are start-<family> (active when the
// fault reports an op: it did something) and stop-<family> (over).
func replay(t *testing.T, ops []string) map[string]bool {
	active := map[string]bool{}
	for _, op := range ops {
		f, value, _ := strings.Cut(op, " ")
		on, isOn := strings.CutPrefix(f, "on-")
		if fam, ok := strings.CutPrefix(f, "start-"); ok && strings.Contains(value, `"op":`) {
			on, isOn = fam, true
		}
		if isOn {
			assert.False(t, active[on], "%s started while active: %v", on, ops)
			active[on] = true
		}
		for _, prefix := range []string{"off-", "stop-"} {
			if fam, ok := strings.CutPrefix(f, prefix); ok {
				assert.True(t, active[fam], "%s stopped while inactive: %v", fam, ops)
				delete(active, fam)
			}
		}
	}
	return active
}

// Over a time limit, faults start back to back: the first after the
// shortest hold, each holding between it and the interval, at most two at
// once and one per family; each transition is recorded in order; at the
// end the active faults are stopped and everything healed, in order; a
// seed replays the same history.
func TestScheduleRecordsTransitionsAndHeals(t *testing.T) {
	play := func() ([]string, []time.Duration, []string) {
		fx := newScheduleFixture(t, 42, "kill", "pause", "clock")
		fx.s.TimeLimit = 95 * time.Second
		delays, err := fx.run(t, nil)
		require.NoError(t, err)
		return nemesisOps(t, fx.rec), delays, fx.log.all()
	}
	ops, delays, calls := play()
	assert.Equal(t, time.Second, delays[0], "the first fault starts an election timeout in")
	var total time.Duration
	for _, d := range delays {
		total += d
	}
	assert.Equal(t, 95*time.Second, total, "the last wait ends at the time limit")

	heal := len(ops) - 1
	final := heal
	for final > 0 && strings.HasPrefix(ops[final-1], "off-") && len(replay(t, ops[:final])) > 0 {
		final-- // the final stops come right before the heal
	}
	starts, most := 0, 0
	for i := range ops[:heal] {
		if strings.HasPrefix(ops[i], "on-") {
			starts++
		}
		most = max(most, len(replay(t, ops[:i+1])))
	}
	assert.GreaterOrEqual(t, starts, 12, "95 s of holds of 2-10 s, starting before the last ends: %v", ops)
	assert.Equal(t, 2, most, "two faults overlap at most, and do: %v", ops)
	assert.Empty(t, replay(t, ops[:heal]), "nothing active before the heal")
	assert.Equal(t, `heal {"faults":["kill","pause","clock"]}`, ops[heal])
	assert.Equal(t, []string{"heal kill", "heal pause", "heal clock"}, calls[len(calls)-3:])

	again, againDelays, _ := play()
	assert.Equal(t, ops, again, "the same seed replays the same history")
	assert.Equal(t, delays, againDelays)
}

// Cancelling ctx ends the schedule at once, and it still stops what is
// active and heals every family.
func TestScheduleHealsOnCancel(t *testing.T) {
	fx := newScheduleFixture(t, 7, "kill", "pause")
	_, err := fx.run(t, func(waits int) bool { return waits == 4 })
	require.NoError(t, err)
	ops := nemesisOps(t, fx.rec)
	require.GreaterOrEqual(t, len(ops), 4)
	assert.Empty(t, replay(t, ops[:len(ops)-1]))
	assert.Equal(t, `heal {"faults":["kill","pause"]}`, ops[len(ops)-1])
	calls := fx.log.all()
	assert.Equal(t, []string{"heal kill", "heal pause"}, calls[len(calls)-2:])
}

// Cancelled before the first transition: nothing to stop, the heal runs.
func TestScheduleHealsWhenCancelledAtOnce(t *testing.T) {
	fx := newScheduleFixture(t, 7, "kill")
	_, err := fx.run(t, func(int) bool { return true })
	require.NoError(t, err)
	assert.Equal(t, []string{`heal {"faults":["kill"]}`}, nemesisOps(t, fx.rec))
	assert.Equal(t, []string{"heal kill"}, fx.log.all())
}

// A fault's errors are recorded as info ops with the error, and the
// schedule goes on: a Start that did nothing leaves its family inactive, a
// Start that did something leaves it active, so it is stopped at the end.
func TestScheduleRecordsFaultErrorsAndContinues(t *testing.T) {
	fx := newScheduleFixture(t, 1, "partition", "kill")
	fx.faults["partition"].startErr = errors.New("n2: iptables: exited 1")
	fx.faults["kill"].startErr = errors.New("n3: kill: exited 1")
	fx.faults["kill"].partial = true
	fx.s.TimeLimit = 60 * time.Second
	_, err := fx.run(t, nil)
	require.NoError(t, err)
	ops := nemesisOps(t, fx.rec)
	assert.Contains(t, ops, `start-partition {"error":"n2: iptables: exited 1"}`)
	assert.Contains(t, ops, `start-kill {"error":"n3: kill: exited 1","op":"on-kill","value":{"n":1}}`)
	assert.Contains(t, ops, "off-kill 1", "the partly started kill is stopped")
	assert.Empty(t, replay(t, ops[:len(ops)-1]))
	assert.Equal(t, `heal {"faults":["partition","kill"]}`, ops[len(ops)-1])
	assert.Greater(t, fx.faults["partition"].startSeen, 1, "the schedule kept trying after an error: %v", ops)
}

// A Stop that fails is recorded and its family is over; a heal that fails
// is recorded with its error and returned by Run.
func TestScheduleStopAndHealErrors(t *testing.T) {
	fx := newScheduleFixture(t, 3, "pause")
	fx.faults["pause"].stopErr = errors.New("n1: resume: exited 1")
	fx.faults["pause"].healErr = errors.New("n1: resume: exited 1")
	_, err := fx.run(t, func(waits int) bool { return waits == 3 })
	require.EqualError(t, err, "heal pause: n1: resume: exited 1")
	ops := nemesisOps(t, fx.rec)
	assert.Equal(t, []string{
		`on-pause {"n":1,"pick":61}`,
		`stop-pause {"error":"n1: resume: exited 1","op":"off-pause","value":1}`,
		`heal {"error":"heal pause: n1: resume: exited 1","faults":["pause"]}`,
	}, ops)
}

func TestScheduleRejectsBadConfiguration(t *testing.T) {
	cases := map[string]func(*Schedule){
		"nemesis schedule: no faults":                                       func(s *Schedule) { s.Faults = nil },
		"nemesis schedule: interval 0s must be positive":                    func(s *Schedule) { s.Interval = 0 },
		"nemesis schedule: min hold -1s and overlap 0 must not be negative": func(s *Schedule) { s.MinHold = -time.Second },
		"nemesis schedule: Rng, Recorder and Cluster are required":          func(s *Schedule) { s.Rng = nil },
		`nemesis schedule: fault family "kill" appears twice`:               func(s *Schedule) { s.Faults = append(s.Faults, s.Faults[0]) },
	}
	for want, mutate := range cases {
		fx := newScheduleFixture(t, 1, "kill")
		mutate(fx.s)
		assert.EqualError(t, fx.s.Run(context.Background()), want)
		assert.Empty(t, fx.rec.Ops(), "a misconfigured schedule does nothing")
		assert.Empty(t, fx.log.all())
	}
}

// The real faults' ops go into the history as the contract shows them.
func TestScheduleWithKillRecordsContractOps(t *testing.T) {
	c, _, _ := goldenCluster(fiveNodes)
	fx := newScheduleFixture(t, 5)
	fx.s.Faults = []Fault{&Kill{Targets: []Target{TargetOne}}}
	fx.s.Cluster = c
	_, err := fx.run(t, func(waits int) bool { return waits == 2 })
	require.NoError(t, err)
	var lines []string
	for _, op := range fx.rec.Ops() {
		b, err := json.Marshal(op)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	require.Len(t, lines, 3, "%v", lines)
	assert.Regexp(t, `^\{"index":0,"time":\d+,"process":"nemesis","type":"info","f":"kill","value":\{"nodes":\["n\d"\],"mode":"one","effect":"observed"\}\}$`, lines[0])
	assert.Regexp(t, `"f":"start","value":\{"nodes":\["n\d"\]\}`, lines[1])
	assert.Contains(t, lines[2], `"f":"heal","value":{"faults":["kill"]}`)
}

// oneShotFault is a scriptFault whose sequence runs inside Start, taking
// takes on clock (when set), with a budget of budget.
type oneShotFault struct {
	scriptFault
	clock  *stepTime
	takes  time.Duration
	budget time.Duration
}

func (*oneShotFault) OneShot()                        {}
func (f *oneShotFault) Budget(*Cluster) time.Duration { return f.budget }

func (f *oneShotFault) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	if f.clock != nil {
		f.clock.advance(f.takes)
	}
	return f.scriptFault.Start(ctx, c, rng)
}

// newSequence is a OneShot called name that takes takes on fx's clock and
// says it needs budget.
func (fx *scheduleFixture) newSequence(t *testing.T, name string, takes, budget time.Duration) *oneShotFault {
	return &oneShotFault{scriptFault: scriptFault{name: name, t: t, log: fx.log}, clock: fx.clock, takes: takes, budget: budget}
}

// A OneShot fault is stopped in the transition that started it, and the
// next one starts a heartbeat after it ends; one that failed midway is
// stopped at once too, undoing what it left.
func TestScheduleStopsOneShotFaultsAtOnce(t *testing.T) {
	fx := newScheduleFixture(t, 3)
	fx.s.Faults = []Fault{fx.newSequence(t, "seq", 5*time.Second, 5*time.Second)}
	fx.s.TimeLimit = 35 * time.Second
	delays, err := fx.run(t, nil)
	require.NoError(t, err)
	ops := nemesisOps(t, fx.rec)
	assert.Equal(t, []string{`on-seq {"n":1,"pick":` + pickOf(ops[0]) + `}`, "off-seq 1"}, ops[:2])
	starts := 0
	for _, c := range fx.log.all() {
		if c == "start seq" {
			starts++
		}
	}
	// At 2 s, 7.1 s, 12.2 s, ... 27.5 s: the sixth would end at 37.6 s.
	assert.Equal(t, 6, starts, "one after the other, while one fits: %v", fx.log.all())
	assert.Equal(t, 100*time.Millisecond, delays[1], "a heartbeat after the sequence before")
	assert.Empty(t, replay(t, ops[:len(ops)-1]))

	// The same through a wrapper with Unwrap (the campaign's tracking).
	fx = newScheduleFixture(t, 3)
	fx.s.Faults = []Fault{&wrapped{fx.newSequence(t, "seq", 5*time.Second, 5*time.Second)}}
	fx.s.TimeLimit = 8 * time.Second
	_, err = fx.run(t, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"start seq", "stop seq", "heal seq"}, fx.log.all(), "stopped at once through the wrapper")

	fx = newScheduleFixture(t, 3)
	failed := fx.newSequence(t, "seq", 5*time.Second, 5*time.Second)
	failed.startErr, failed.partial = errors.New("midway"), true
	fx.s.Faults, fx.s.TimeLimit = []Fault{failed}, 8*time.Second
	_, err = fx.run(t, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"start seq", "stop seq", "heal seq"}, fx.log.all(),
		"a sequence that failed midway is undone at once")
}

// pickOf is the "pick" value of a rendered on-<family> op.
func pickOf(op string) string {
	_, after, _ := strings.Cut(op, `"pick":`)
	return strings.TrimSuffix(after, "}")
}

// wrapped wraps a Fault as the campaign's tracking does.
type wrapped struct{ Fault }

func (w *wrapped) Unwrap() Fault { return w.Fault }

// A OneShot gets a clear stage: whatever is active when it is picked is
// stopped first, in heal order (pause before kill), so that no other
// fault is in effect while its sequence runs.
func TestScheduleClearsTheStageForOneShots(t *testing.T) {
	fx := newScheduleFixture(t, 5, "kill", "pause", "partition")
	fx.s.Faults = append(fx.s.Faults, fx.newSequence(t, "seq", 3*time.Second, 3*time.Second))
	fx.s.Weights = []int{1, 1, 1, 2}
	fx.s.TimeLimit = 300 * time.Second
	_, err := fx.run(t, nil)
	require.NoError(t, err)
	ops := nemesisOps(t, fx.rec)
	cleared, sequences := 0, 0
	for i, op := range ops {
		if !strings.HasPrefix(op, "on-seq ") {
			continue
		}
		sequences++
		active := replay(t, ops[:i])
		assert.Empty(t, active, "faults in effect when the sequence started: %v", ops[:i+1])
		if i > 0 && strings.HasPrefix(ops[i-1], "off-") && ops[i-1] != "off-seq" {
			cleared++
		}
	}
	require.Greater(t, sequences, 3, "%v", ops)
	require.Positive(t, cleared, "seed 5 should pick the sequence while a fault is active: %v", ops)
	holds, _ := held(t, fx.rec)
	for _, h := range holds {
		if h[1] > h[0] { // the sequences' on and off come at once
			assert.GreaterOrEqual(t, h[1]-h[0], 2*time.Second, "a fault cleared before it held two election timeouts")
		}
	}

	// The stage is cleared in heal order: pause before kill.
	fx = newScheduleFixture(t, 5, "kill", "pause", "partition")
	fx.s.Faults = append(fx.s.Faults, fx.newSequence(t, "seq", time.Second, time.Second))
	r := newScheduleRun(fx.s)
	for _, name := range []string{"kill", "pause", "partition"} {
		fx.faults[name].active = true
	}
	copy(r.active, []bool{true, true, true, false})
	r.runSequence(context.Background(), 3, time.Time{})
	assert.Equal(t, []string{"stop pause", "stop partition", "stop kill", "start seq", "stop seq"}, fx.log.all())
}
