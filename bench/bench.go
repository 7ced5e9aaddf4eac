// Package bench measures a system under test without faults or checks: a
// cluster of its nodes (three on this machine in local mode), the clients
// chaos run uses in a closed loop of reads and writes, and per operation
// the throughput and latency quantiles over a measured window; then, if
// asked, the leader killed N times and the time from each kill to the next
// acknowledged write.
//
// A benchmark records its operations as a run does (history.Recorder, in
// memory only) and reads its figures from that history, so what it
// measures is exactly what a run's clients see.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"chaos/cluster"
	"chaos/db"
	"chaos/history"
	"chaos/internal/sleep"
	"chaos/nemesis"
	"chaos/workload"
)

// LocalNodes is the cluster size of a benchmark in local mode.
const LocalNodes = 3

// Options say what to measure.
type Options struct {
	// Cluster is the system and its hosts; LocalNodes is set by Run.
	Cluster cluster.Options
	// System names the system in the result (its --db).
	System string
	// Clients is the number of closed-loop workers, bound to the nodes
	// round robin.
	Clients int
	// Warmup is how long the load runs before the measured window.
	Warmup time.Duration
	// Duration is the measured window.
	Duration time.Duration
	// ReadRatio is the fraction of operations that are reads.
	ReadRatio float64
	// ValueSize is the size in bytes of a written value (at least the
	// digits of its number; see workload.Op.Width).
	ValueSize int
	// Keys is how many keys the load spreads over.
	Keys int
	// Failover is how many times the leader is killed after the window.
	Failover int
	// RequestTimeout bounds each operation.
	RequestTimeout time.Duration
	// Seed seeds the workers' choices.
	Seed uint64
	// VDSOClock patches every node's processes with the vdso clock at
	// offset 0 before the load (chaos bench --vdso-clock): the patch's
	// cost, no clock moved.
	VDSOClock bool
	// Log, if set, receives a line per step (setup, kills, restarts).
	Log io.Writer
}

// Result is one benchmark's figures (chaos bench --json prints it).
type Result struct {
	System          string  `json:"system"`
	Nodes           int     `json:"nodes"`
	Clients         int     `json:"clients"`
	DurationS       float64 `json:"duration_s"`
	ReadRatio       float64 `json:"read_ratio"`
	ValueSize       int     `json:"value_size"`
	Keys            int     `json:"keys"`
	ReadConsistency string  `json:"read_consistency"`
	// StorageFaults is true when the data directories were served
	// through the fault file system (chaos bench --storage-faults).
	StorageFaults bool `json:"storage_faults,omitempty"`
	// VDSOClock is true when the nodes' clocks were read through the vdso
	// patch (chaos bench --vdso-clock).
	VDSOClock bool `json:"vdso_clock,omitempty"`
	// Runs, when above 1, is how many runs the figures are medians of
	// (Median).
	Runs     int       `json:"runs,omitempty"`
	Ops      []OpStats `json:"ops"`
	Failover *Failover `json:"failover,omitempty"`
}

// Op returns the figures of operation f, or zero figures.
func (r Result) Op(f string) OpStats {
	for _, s := range r.Ops {
		if s.F == f {
			return s
		}
	}
	return OpStats{F: f}
}

// Validate checks the options a user gives, before any host is touched;
// errors name chaos bench's flags.
func (o Options) Validate() error {
	switch {
	case o.Clients < 1 || o.Clients > workload.MaxConcurrency:
		return fmt.Errorf("--clients %d: want 1 to %d", o.Clients, workload.MaxConcurrency)
	case o.Duration <= 0:
		return fmt.Errorf("--duration %v: want a positive duration", o.Duration)
	case o.Warmup < 0:
		return fmt.Errorf("--warmup %v is negative", o.Warmup)
	case o.ReadRatio < 0 || o.ReadRatio > 1 || o.ReadRatio != o.ReadRatio:
		return fmt.Errorf("--read-ratio %v: want a fraction from 0 to 1", o.ReadRatio)
	case o.ValueSize < 0 || o.ValueSize > maxValueSize:
		return fmt.Errorf("--value-size %d: want 0 to %d bytes", o.ValueSize, maxValueSize)
	case o.Keys < 1:
		return fmt.Errorf("--keys %d: want at least 1", o.Keys)
	case o.Failover < 0:
		return fmt.Errorf("--failover %d: want a count of leader kills, 0 for none", o.Failover)
	case o.RequestTimeout <= 0:
		return fmt.Errorf("--request-timeout %v: want a positive duration", o.RequestTimeout)
	}
	return nil
}

// maxValueSize bounds --value-size (1 MiB, past which a request is no
// longer a key-value write).
const maxValueSize = 1 << 20

// Run sets up the cluster from empty data, measures it and tears it down.
// A *cluster.ConfigError is a system that refuses its options (or cannot
// name its leader for Failover), before any node starts.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	o.Cluster.LocalNodes = LocalNodes
	setupCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := cluster.Connect(setupCtx, o.Cluster)
	if err != nil {
		return Result{}, err
	}
	defer c.Close(false)
	if o.Failover > 0 && db.CapabilitiesOf(c.DB).Leader == nil {
		return Result{}, &cluster.ConfigError{Err: fmt.Errorf("--failover: %s cannot say which node leads, so none can be killed as the leader", c.DB.Name())}
	}
	o.logf("%s: setting up %d nodes", o.System, len(c.Nodes))
	if err := c.Setup(setupCtx); err != nil {
		return Result{}, errors.Join(fmt.Errorf("set up: %w", err), teardown(c))
	}
	if o.VDSOClock {
		o.logf("%s: patching the nodes' clocks (offset 0)", o.System)
		nc := nemesis.NewCluster(c.DB, c.Nodes, c.Remotes, true)
		nc.VDSOClock = nemesis.NewVDSOClock(c.Layout, !c.Local)
		if err := nemesis.PatchClocks(setupCtx, nc); err != nil {
			return Result{}, errors.Join(fmt.Errorf("vdso clock: %w", err), teardown(c))
		}
	}
	res, err := measure(ctx, c, o)
	return res, errors.Join(err, teardown(c))
}

func teardown(c *cluster.Cluster) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Teardown(ctx, "", false); err != nil {
		return fmt.Errorf("tear down: %w", err)
	}
	return nil
}

// measure runs the load on a set-up cluster: the warm-up, the window, then
// the leader kills, and reads the figures from the history.
func measure(ctx context.Context, c *cluster.Cluster, o Options) (Result, error) {
	clients, err := c.Clients(o.Clients)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		for _, cl := range clients {
			_ = cl.Close()
		}
	}()
	mix, err := NewMix(o.ReadRatio, o.Keys, o.ValueSize)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	since := func() time.Duration { return time.Since(start) }
	rec := history.NewRecorder(nil, since, history.RecorderOptions{}) // in memory only: no line is encoded that no one reads
	stop := make(chan struct{})
	runner, err := workload.NewRunner(workload.Config{Clients: clients, Stop: stop,
		RequestTimeout: o.RequestTimeout, Generator: mix, Recorder: rec, Seed: o.Seed})
	if err != nil {
		return Result{}, err
	}
	loadCtx, cancelLoad := context.WithCancel(ctx)
	defer cancelLoad()
	done := make(chan error, 1)
	go func() { _, err := runner.Run(loadCtx); done <- err }()

	o.logf("%s: warm-up %v, then %v measured", o.System, o.Warmup, o.Duration)
	window := sleep.For(ctx, o.Warmup)
	from := since()
	window = errors.Join(window, sleep.For(ctx, o.Duration))
	to := since()
	var kills []Kill
	if window == nil && o.Failover > 0 {
		kills, window = failover(ctx, c, rec, since, o)
	}
	close(stop)
	loadErr := <-done
	_ = rec.Close()
	res := Result{System: o.System, Nodes: len(c.Nodes), Clients: o.Clients, DurationS: (to - from).Seconds(),
		ReadRatio: o.ReadRatio, ValueSize: o.ValueSize, Keys: o.Keys,
		ReadConsistency: readConsistency(o.Cluster.ReadConsistency), StorageFaults: o.Cluster.StorageFaults, VDSOClock: o.VDSOClock,
		Ops: opStats(rec.Ops(), int64(from), int64(to))}
	if o.Failover > 0 {
		res.Failover = summarize(kills)
	}
	return res, errors.Join(window, loadErr)
}

func readConsistency(rc string) string {
	if rc == "" {
		return cluster.ReadLinearizable
	}
	return rc
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}
