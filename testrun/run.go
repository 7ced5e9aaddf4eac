package testrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"chaos/checker"
	"chaos/cluster"
	"chaos/history"
	"chaos/history/faultrec"
	"chaos/internal/secret"
	"chaos/internal/termsafe"
	"chaos/nemesis"
	"chaos/testrun/runrecord"
	"chaos/workload"
)

// ErrSetup marks failures to reach or prepare the hosts (exit 255).
var ErrSetup = errors.New("setup failed")

// Result is one run's outcome.
type Result struct {
	Valid       checker.Validity
	Dir         string // the run directory
	Report      checker.Report
	Interrupted bool
	Seed        uint64
	// FirstAnomalyS is when the first anomaly happened, in seconds from
	// the start of the load; nil without one (see firstAnomaly).
	FirstAnomalyS *float64
	// OpsPerS is the operations that completed ok per second of load.
	OpsPerS float64
	// Faults is what became of the schedule's faults (results.json's
	// nemesis.counts).
	Faults faultrec.Tally
}

// Env is what a run talks to besides its options.
type Env struct {
	// Out receives the final summary (escaped by Run, package termsafe);
	// Progress the live progress display.
	Out, Progress io.Writer
	// ProgressIsTerminal selects the live display over periodic lines.
	ProgressIsTerminal bool
	// Hard is cancelled by a second interrupt: stop at once after healing.
	Hard context.Context
	// Version is recorded in test.json.
	Version string
	// Report, when set, writes the report of a run directory once its
	// results.json is written (cmd/chaos gives runreport.Write).
	Report func(runDir string) error
}

// Run runs the test o.TestCount times, stopping at the first invalid run
// or interrupt, and returns the last run's result. ctx is cancelled by the
// first interrupt: the load stops, faults are healed, logs pulled, and the
// history recorded so far is checked and reported as interrupted.
func Run(ctx context.Context, o Options, env Env) (Result, error) {
	if err := o.Prepare(); err != nil {
		return Result{}, err
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64() >> 1
	}
	if env.Hard == nil {
		env.Hard = context.Background()
	}
	// What a run prints comes from data (keys, node names, errors nodes
	// and remote shells sent): nothing of it may act on a terminal.
	env.Out = termsafe.NewWriter(env.Out)
	var res Result
	for i := range o.TestCount {
		var err error
		res, err = runOnce(ctx, o, env, o.Seed+uint64(i))
		if err != nil || res.Valid == checker.Invalid || res.Interrupted {
			return res, err
		}
	}
	return res, nil
}

// run is the state of one run.
type run struct {
	o     Options
	env   Env
	seed  uint64
	rd    *runDir
	log   *slog.Logger
	start time.Time
	cl    *cluster.Cluster
	rec   *history.Recorder
	histF *os.File
	// recorded is what the run keeps of the history, which the recorder
	// hands it op by op.
	recorded recording
	faults   []nemesis.Fault
	started  time.Time
	leaders  leaderLog // who led during the load, sampled by the progress poller
	// leftovers is the setup's heal op, when it found what an earlier
	// run left (see healLeftovers); the zero Op otherwise.
	leftovers nemesis.Op
}

func runOnce(ctx context.Context, o Options, env Env, seed uint64) (Result, error) {
	fmt.Fprintf(env.Out, "chaos run %s: seed %d (replay with --seed %d)\n", o.Name, seed, seed)
	rd, err := newRunDir(o.Store, o.Name, time.Now())
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	r := &run{o: o, env: env, seed: seed, rd: rd, started: time.Now()}
	logFile, err := os.Create(rd.path("chaos.log"))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	defer logFile.Close()
	r.log = slog.New(slog.NewTextHandler(logFile, nil))
	if err := r.writeTestJSON(); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	res, err := r.execute(ctx)
	res.Dir, res.Seed = rd.dir, seed
	if err != nil {
		r.log.Error("run failed", "err", err)
	}
	return res, err
}

func (r *run) writeTestJSON() error {
	o := r.o
	var ssh *runrecord.SSHRecord
	if len(o.Nodes) > 0 {
		ssh = sshRecord(o.SSH)
	}
	return r.rd.writeJSON("test.json", runrecord.TestRecord{
		Name: o.Name, Seed: r.seed, Argv: secret.Args(o.Argv), Version: r.env.Version,
		Started: r.started.UTC().Format(time.RFC3339Nano), Nodes: o.Nodes, Local: len(o.Nodes) == 0,
		DB: o.DB, Workload: o.Workload, Keys: o.Keys, ReadConsistency: o.ReadConsistency, Concurrency: o.Concurrency,
		Rate: o.Rate, TimeLimitS: o.TimeLimit.Seconds(), Nemesis: o.Nemesis,
		NemesisIntervalS: o.NemesisInterval.Seconds(), ScheduleVersion: nemesis.ScheduleVersion, StorageFaults: o.storageFaults(), StorageNames: o.storageNames(), CorruptFiles: o.CorruptFiles, CorruptHows: o.CorruptHows, Bugs: o.Bugs,
		CheckerTimeoutS: o.CheckerTimeout.Seconds(), Checker: o.Checker, LeaveDBRunning: o.LeaveDBRunning,
		RecoveryS: o.Recovery.Seconds(), RecoveryAdvisory: o.recoveryAdvisory, SSH: ssh,
		NodeProcess: containerOnly(o.NodeProcess),
	})
}

// execute runs the phases. Setup first removes what an earlier run left on
// the hosts (healLeftovers; its heal op becomes the history's first line),
// then deploys. Setup failures return ErrSetup before any fault is
// injected; from the load phase on, the run always heals, tears down,
// pulls logs and checks what was recorded.
func (r *run) execute(ctx context.Context) (Result, error) {
	setupCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cl, err := cluster.Connect(setupCtx, r.o.clusterOptions())
	if err != nil {
		if ce := (*cluster.ConfigError)(nil); errors.As(err, &ce) {
			return Result{}, fmt.Errorf("%w: %v", ErrUsage, ce.Err)
		}
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	r.cl = cl
	defer cl.Close(r.o.LeaveDBRunning)
	faults, unavailable, err := r.pickFaults(setupCtx)
	if err != nil {
		return Result{}, err
	}
	r.log.Info("setting up", "db", r.o.DB, "nodes", len(cl.Nodes))
	if err := r.healLeftovers(setupCtx); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if err := cl.Setup(setupCtx); err != nil {
		r.teardown()
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	load, err := r.prepareLoad(ctx)
	if err != nil {
		r.teardown()
		return Result{}, err
	}
	r.recordLeftovers()
	interrupted := r.loadPhase(ctx, load, faults)
	if r.env.Hard.Err() != nil {
		r.teardown()
		return Result{Interrupted: true, Valid: checker.Unknown}, errors.New("interrupted twice: stopped after healing, without checking")
	}
	r.finalPhase(ctx, load)
	if err := r.rec.Close(); err != nil {
		r.log.Error("closing the history", "err", err)
	}
	r.teardown()
	return r.check(ctx, unavailable, interrupted)
}

// load is what the load phase drives.
type load struct {
	runner  *workload.Runner
	clients []workload.Client
	set     *workload.Set
	// stop ends the load when closed (see endLoad); the runner's own time
	// limit, past every end endLoad picks, is only a backstop.
	stop chan struct{}
}

func (r *run) prepareLoad(ctx context.Context) (*load, error) {
	concurrency, err := workload.ParseConcurrency(r.o.Concurrency, len(r.cl.Nodes))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	clients, err := r.cl.Clients(concurrency)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	l := &load{clients: clients, stop: make(chan struct{})}
	var gen workload.Generator
	var keys []string
	if r.o.Workload == "set" {
		l.set = workload.NewSet()
		gen = l.set
	} else if reg, err := workload.NewRegister(r.o.Keys); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	} else {
		gen, keys = reg, reg.Keys()
	}
	if r.o.NodeProcess == NodeProcessContainer {
		if err := emptyAtStart(ctx, clients[0], keys); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSetup, err)
		}
	}
	if r.histF, err = os.Create(r.rd.path("history.jsonl")); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	r.start = time.Now()
	r.recorded.checks = newChecking(r.rd.dir, r.checkOptions())
	r.rec = history.NewRecorder(r.histF, func() time.Duration { return time.Since(r.start) },
		history.RecorderOptions{Sink: r.recorded.take})
	l.runner, err = workload.NewRunner(workload.Config{Clients: clients, Rate: r.o.Rate,
		TimeLimit: r.o.TimeLimit + maxLoadOverrun + time.Second, Stop: l.stop,
		RequestTimeout: r.o.RequestTimeout, Generator: gen, Recorder: r.rec, Seed: r.seed})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return l, nil
}

// teardown stops the nodes (unless asked not to) and pulls their logs, on
// a context of its own so an interrupted run still gets its logs.
func (r *run) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.cl.Teardown(ctx, r.rd.path("nodes"), r.o.LeaveDBRunning); err != nil {
		r.log.Error("teardown", "err", err)
		fmt.Fprintf(r.env.Out, "warning: teardown: %v\n", err)
	}
}

// emptyAtStart refuses a run on nodes that hold the workload's data
// already: a container that is the node is not wiped (chaos does not know
// where it keeps its data), and the checks take every key to start absent,
// so a value from an earlier run would read as one nobody wrote. keys are
// the register's; none means the set, read whole.
func emptyAtStart(ctx context.Context, c workload.Client, keys []string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ops := []workload.Op{{F: history.FRead}}
	if len(keys) > 0 {
		ops = ops[:0]
		for _, k := range keys {
			ops = append(ops, workload.Op{F: history.FRead, Key: k})
		}
	}
	for _, op := range ops {
		out := c.Do(ctx, op)
		if out.Type != history.OK {
			return fmt.Errorf("reading %s before the load to check it is empty: %s", cmp.Or(op.Key, "the set"), cmp.Or(out.Error, "no answer"))
		}
		shown := ""
		switch v := out.Value.(type) {
		case *int64:
			if v != nil {
				shown = strconv.FormatInt(*v, 10)
			}
		case []int64:
			if len(v) > 0 {
				shown = fmt.Sprintf("%d elements", len(v))
			}
		case nil:
		default:
			shown = fmt.Sprint(v)
		}
		if shown == "" {
			continue
		}
		return fmt.Errorf("the nodes hold data from before this run (%s = %s): chaos does not wipe a container that is the node; start the containers from empty data (docker compose down -v, then up -d)",
			cmp.Or(op.Key, "the set"), shown)
	}
	return nil
}

// containerOnly is --node-process as test.json records it: only when the
// containers are the nodes.
func containerOnly(p string) string {
	if p == NodeProcessContainer {
		return p
	}
	return ""
}
