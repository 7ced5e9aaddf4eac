package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"chaos/cluster"
	"chaos/control"
	"chaos/db"
	"chaos/history"
	"chaos/internal/sleep"
)

// Failover measurement bounds.
const (
	// recoveryWait is how long a kill waits for the next acknowledged
	// write; past it the kill counts as not recovered.
	recoveryWait = 10 * time.Second
	// settle is how long the restarted node gets to catch up before the
	// next kill.
	settle = time.Second
	// pollEvery is how often the history and the leader are looked at.
	pollEvery = 5 * time.Millisecond
)

// Kill is one kill of the leader.
type Kill struct {
	// Node is the leader that was killed.
	Node string `json:"node"`
	// AtS is when the leader was dead, in seconds since the load began:
	// the moment the kill command returned (kill(2) had delivered SIGKILL).
	// Taking the moment before the command would count writes the leader
	// acknowledged while the command was still starting.
	AtS float64 `json:"at_s"`
	// Recovered is true when a write invoked after the kill was
	// acknowledged within recoveryWait; RecoveredMs is then the time from
	// the kill to that acknowledgement.
	Recovered   bool    `json:"recovered"`
	RecoveredMs float64 `json:"recovered_ms,omitempty"`
}

// Failover sums up the kills: quantiles of the recovered ones, and how
// many did not recover within recoveryWait.
type Failover struct {
	Kills       []Kill  `json:"kills"`
	P50Ms       float64 `json:"p50_ms"`
	MaxMs       float64 `json:"max_ms"`
	Unrecovered int     `json:"unrecovered"`
}

func summarize(kills []Kill) *Failover {
	f := &Failover{Kills: kills}
	var lat []time.Duration
	for _, k := range kills {
		if !k.Recovered {
			f.Unrecovered++
			continue
		}
		lat = append(lat, time.Duration(k.RecoveredMs*float64(time.Millisecond)))
	}
	slices.Sort(lat)
	f.P50Ms = quantile(lat, 0.5)
	if len(lat) > 0 {
		f.MaxMs = ms(lat[len(lat)-1])
	}
	return f
}

// failover kills the leader o.Failover times while the load runs: each
// time it waits for the next acknowledged write, restarts the killed node,
// waits until it is ready and lets it catch up.
func failover(ctx context.Context, c *cluster.Cluster, rec *history.Recorder, since func() time.Duration, o Options) ([]Kill, error) {
	acks := &ackScanner{invoked: map[history.Process]int64{}}
	var kills []Kill
	for i := range o.Failover {
		leader, err := awaitLeader(ctx, c)
		if err != nil {
			return kills, fmt.Errorf("failover %d: %w", i+1, err)
		}
		n, err := c.Node(leader)
		if err != nil {
			return kills, err
		}
		r := c.Remotes[leader]
		if err := c.DB.Kill(ctx, r, n); err != nil {
			return kills, fmt.Errorf("failover %d: kill %s: %w", i+1, leader, err)
		}
		at := since()
		k := Kill{Node: leader, AtS: at.Seconds()}
		if ackAt, ok := acks.await(ctx, rec, int64(at)); ok {
			k.Recovered, k.RecoveredMs = true, ms(time.Duration(ackAt)-at)
		}
		kills = append(kills, k)
		o.logf("%s: kill %d of %s: %s", o.System, i+1, leader, k.describe())
		if err := restart(ctx, c.DB, r, n); err != nil {
			return kills, fmt.Errorf("failover %d: %w", i+1, err)
		}
		if err := sleep.For(ctx, settle); err != nil {
			return kills, err
		}
	}
	return kills, nil
}

func (k Kill) describe() string {
	if !k.Recovered {
		return fmt.Sprintf("no write acknowledged within %v", recoveryWait)
	}
	return fmt.Sprintf("next write acknowledged after %.0f ms", k.RecoveredMs)
}

// awaitLeader polls until the cluster names a leader (recoveryWait at most).
func awaitLeader(ctx context.Context, c *cluster.Cluster) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, recoveryWait)
	defer cancel()
	for {
		leader, err := c.Leader(ctx)
		if err == nil {
			return leader, nil
		}
		if sleep.For(ctx, pollEvery) != nil {
			return "", fmt.Errorf("no leader within %v: %w", recoveryWait, err)
		}
	}
}

// restart starts the killed node again (its process may take a moment to
// go: Start refuses a node whose process still runs) and waits until it is
// ready.
func restart(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := d.Start(ctx, r, n)
		if err == nil {
			break
		}
		if sleep.For(ctx, 100*time.Millisecond) != nil {
			return fmt.Errorf("restart %s: %w", n.Name, err)
		}
	}
	if err := d.Ready(ctx, n); err != nil {
		return fmt.Errorf("restart %s: not ready: %w", n.Name, err)
	}
	return nil
}

// ackScanner reads a growing history for the first write acknowledged
// after a moment, pairing completions with invocations by process.
type ackScanner struct {
	next    int                       // the first op not read yet
	invoked map[history.Process]int64 // open invocations' times
}

// await polls the history until a write invoked at or after at (ns since
// the start) completes ok, and returns that completion's time; false when
// none does within recoveryWait.
func (s *ackScanner) await(ctx context.Context, rec *history.Recorder, at int64) (int64, bool) {
	ctx, cancel := context.WithTimeout(ctx, recoveryWait)
	defer cancel()
	for {
		if t, ok := s.scan(rec.Ops(), at); ok {
			return t, true
		}
		if sleep.For(ctx, pollEvery) != nil {
			return 0, false
		}
	}
}

// scan reads ops from where it stopped; it stops after the first write
// invoked at or after at that completed ok.
func (s *ackScanner) scan(ops history.History, at int64) (int64, bool) {
	for ; s.next < len(ops); s.next++ {
		op := &ops[s.next]
		if op.Process.IsNemesis() {
			continue
		}
		if op.Type == history.Invoke {
			s.invoked[op.Process] = op.Time
			continue
		}
		inv, ok := s.invoked[op.Process]
		delete(s.invoked, op.Process)
		if ok && op.F == history.FWrite && op.Type == history.OK && inv >= at {
			s.next++
			return op.Time, true
		}
	}
	return 0, false
}
