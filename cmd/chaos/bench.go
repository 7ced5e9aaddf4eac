package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"chaos/bench"
	"chaos/cluster"
	"chaos/db"
)

// benchOptions are chaos bench's flags.
type benchOptions struct {
	hosts   hostFlags
	o       bench.Options
	db      string
	binary  string
	reads   string
	compare string
	json    bool
	// nRounds is --rounds: how many times each system is measured.
	nRounds int
	// storageFaults benchmarks the system twice, its data directories
	// served directly and then through the fault file system.
	storageFaults bool
	// vdsoClock benchmarks the system twice, its nodes' clocks read
	// through the vdso patch (offset 0) and then directly.
	vdsoClock bool
	// valueSizeSet is true when --value-size was given, not defaulted.
	valueSizeSet bool
	// stderr receives the SSH warnings.
	stderr io.Writer
}

func newBenchCmd() *cobra.Command {
	bo := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Throughput and latency of a cluster, no faults",
		Long: `bench sets up a cluster of the system under test from empty data (three
nodes on this machine without --nodes; every host given with --nodes), drives
it with chaos run's clients in a closed loop of reads and writes (no faults, no
checking), and prints per operation the acknowledged operations per second and
the latency quantiles (p50, p90, p99, max) over the measured window, after a
warm-up.

--failover N then kills the leader N times while the load goes on and reports
the time from each kill (SIGKILL delivered) to the next acknowledged write (a write
invoked after the kill), p50 and max; the killed node is restarted and caught
up before the next kill.

--compare DB runs the same benchmark against a second system, one after the
other, and prints both and the ratios (first over second).

--rounds N measures N times and prints each figure's median (with
--compare, --storage-faults or --vdso-clock: N rounds of both systems, one right after
the other, the first going first in odd rounds, and each ratio the median of
the rounds' ratios with its range). One run on a shared or virtual host can
move by ten percent or more; quote medians.

--storage-faults runs the same benchmark twice on one system: first with each
node's data directory served through chaos's fault file system (what chaos run
--storage-faults does; FUSE: /dev/fuse and root on every host), then directly,
and prints both and the ratios: the file system's cost. No fault is injected.

--vdso-clock runs the same benchmark twice on one system: first with every
node's processes patched by the vdso clock strategy at offset 0 (their clock
reads go through chaos's code: what --clock-strategy vdso costs; ptrace, root
on every host), then unpatched, and prints both and the ratios.

Exit status: 0 measured, 254 bad arguments, 255 setup failure.`,
		Example: `  chaos bench
  chaos bench --compare etcd --failover 5
  chaos bench --storage-faults --read-ratio 0 --rounds 5
  chaos bench --db etcd --nodes-file hosts --vdso-clock --read-ratio 0 --rounds 9
  chaos bench --db etcd --read-ratio 0 --clients 64 --duration 20s --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBench(cmd, bo) },
	}
	f := cmd.Flags()
	bo.hosts.register(f)
	o := &bo.o
	f.StringVar(&bo.db, "db", "chaos-node", dbFlagHelp())
	f.StringVar(&bo.compare, "compare", "", "a second system to run the same benchmark against, then print the ratios")
	f.StringVar(&bo.binary, "binary", "", "binary to deploy (default: this chaos binary, or the hosts' etcd)")
	f.IntVar(&o.Clients, "clients", 64, "closed-loop clients, bound to the nodes round robin")
	f.DurationVar(&o.Duration, "duration", 10*time.Second, "the measured window")
	f.DurationVar(&o.Warmup, "warmup", time.Second, "load before the measured window")
	f.Float64Var(&o.ReadRatio, "read-ratio", 0.5, "fraction of operations that are reads (0: writes only, 1: reads only)")
	f.IntVar(&o.ValueSize, "value-size", 16, "bytes of each written value (its number padded with zeros; a described system's client command gets the bare number)")
	f.IntVar(&o.Keys, "keys", 1000, "keys the load spreads over")
	f.StringVar(&bo.reads, "read-consistency", cluster.ReadLinearizable, "linearizable, or serializable (a node's local state)")
	f.IntVar(&o.Failover, "failover", 0, "kill the leader this many times after the window and time each recovery")
	f.DurationVar(&o.RequestTimeout, "request-timeout", time.Second, "client request timeout")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the clients' choices")
	f.BoolVar(&bo.storageFaults, "storage-faults", false, "measure the system through the fault file system, then directly, and print the ratios (not with --compare)")
	f.BoolVar(&bo.vdsoClock, "vdso-clock", false, "measure the system with its nodes' clocks read through the vdso clock patch (offset 0), then without, and print the ratios (not with --compare or --storage-faults)")
	f.IntVar(&bo.nRounds, "rounds", 1, "measure this many times (alternating with --compare or --storage-faults) and print the medians")
	f.BoolVar(&bo.json, "json", false, "print the result as JSON")
	return cmd
}

func runBench(cmd *cobra.Command, bo *benchOptions) error {
	warnPasswordFlag(cmd)
	bo.valueSizeSet = cmd.Flags().Changed("value-size")
	bo.stderr = cmd.ErrOrStderr()
	if bo.nRounds < 1 {
		return usageErrorf("bench: --rounds %d: want at least 1", bo.nRounds)
	}
	first, err := bo.options(bo.db)
	if err != nil {
		return err
	}
	var second *bench.Options
	switch {
	case bo.storageFaults && bo.compare != "":
		return usageErrorf("bench: --storage-faults compares %s with itself on the fault file system; leave out --compare %s", bo.db, bo.compare)
	case bo.vdsoClock && (bo.compare != "" || bo.storageFaults):
		return usageErrorf("bench: --vdso-clock compares %s with itself, its clocks patched; leave out --compare and --storage-faults", bo.db)
	case bo.vdsoClock:
		direct := first
		first.VDSOClock = true
		first.System += " with vdso clock"
		second = &direct
	case bo.storageFaults:
		direct := first
		first.Cluster.StorageFaults = true
		first.System += " on faultfs"
		second = &direct
	case bo.compare != "":
		o, err := bo.options(bo.compare)
		if err != nil {
			return err
		}
		second = &o
	}
	ctx, _, stop := interrupts(cmd.Context(), cmd)
	defer stop()
	if !bo.json {
		first.Log = cmd.ErrOrStderr()
		if second != nil {
			second.Log = cmd.ErrOrStderr()
		}
	}
	if second == nil {
		rs, err := bo.rounds(ctx, cmd.ErrOrStderr(), first)
		if err != nil {
			return err
		}
		if len(rs) == 1 {
			return bo.print(cmd.OutOrStdout(), rs[0])
		}
		return bo.print(cmd.OutOrStdout(), bench.Median(rs))
	}
	as, bs, err := bo.alternate(ctx, cmd.ErrOrStderr(), first, *second)
	if err != nil {
		return err
	}
	if len(as) == 1 {
		return bo.printComparison(cmd.OutOrStdout(), bench.Compare(as[0], bs[0]))
	}
	return bo.printComparison(cmd.OutOrStdout(), bench.CompareRounds(as, bs))
}

// rounds runs the benchmark o --rounds times, one after the other.
func (bo *benchOptions) rounds(ctx context.Context, log io.Writer, o bench.Options) ([]bench.Result, error) {
	var rs []bench.Result
	for i := range bo.nRounds {
		bo.logRound(log, i)
		r, err := bench.Run(ctx, o)
		if err != nil {
			return nil, benchError(o.System, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// alternate runs --rounds rounds of a and b, each round both one right
// after the other, a first in odd rounds and b first in even ones, so that
// neither always runs on a host warmed (or slowed) by the other.
func (bo *benchOptions) alternate(ctx context.Context, log io.Writer, a, b bench.Options) (as, bs []bench.Result, err error) {
	systems := [2]bench.Options{a, b}
	for i := range bo.nRounds {
		bo.logRound(log, i)
		var got [2]bench.Result
		for k := range 2 {
			j := (i + k) % 2
			if got[j], err = bench.Run(ctx, systems[j]); err != nil {
				return nil, nil, benchError(systems[j].System, err)
			}
		}
		as, bs = append(as, got[0]), append(bs, got[1])
		if !bo.json && bo.nRounds > 1 {
			fmt.Fprintf(log, "round %d of %d: %s\n", i+1, bo.nRounds, rates(bench.Compare(got[0], got[1])))
		}
	}
	return as, bs, nil
}

// logRound says which round begins, when there are several.
func (bo *benchOptions) logRound(log io.Writer, i int) {
	if !bo.json && bo.nRounds > 1 {
		fmt.Fprintf(log, "round %d of %d\n", i+1, bo.nRounds)
	}
}

// rates is a comparison's rates in one line.
func rates(c bench.Comparison) string {
	var parts []string
	for _, r := range c.Rows {
		if strings.HasSuffix(r.Figure, " ops/s") {
			parts = append(parts, fmt.Sprintf("%s %s vs %s (%.2fx)", r.Figure, figure(r.A), figure(r.B), r.Ratio))
		}
	}
	return strings.Join(parts, ", ")
}

// options are the benchmark of system name the flags give; errors are
// usage errors. --binary applies to --db's system only.
func (bo *benchOptions) options(name string) (bench.Options, error) {
	o := bo.o
	desc, err := cluster.Lookup(name)
	if err != nil {
		return o, usageErrorf("bench: %v", err)
	}
	if desc != nil && desc.Client.HTTP == nil {
		// A client command is handed each value as a JSON number.
		if bo.valueSizeSet {
			return o, usageErrorf("bench: --value-size pads written values as text, but %s's client command gets each value as a JSON number; leave --value-size out", name)
		}
		o.ValueSize = 0
	}
	if o.Failover > 0 && desc != nil && desc.Leader == nil {
		return o, usageErrorf("bench: --failover kills the leader, but %s has no leader probe to name it; add leader: {path: ..., self: ..., leader: ...} to the description, or leave --failover out", name)
	}
	if bo.reads != cluster.ReadLinearizable && bo.reads != cluster.ReadSerializable {
		return o, usageErrorf("bench: --read-consistency %q: want %s or %s", bo.reads, cluster.ReadLinearizable, cluster.ReadSerializable)
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("bench: %v", err)
	}
	hosts, err := bo.hosts.hosts()
	if err != nil {
		return o, err
	}
	ssh, err := bo.hosts.sshConfig(bo.stderr)
	if err != nil {
		return o, err
	}
	o.System = name
	o.Cluster = cluster.Options{Hosts: hosts, SSH: ssh, ReadConsistency: bo.reads,
		NewDB: func(cfg db.Config) (db.DB, error) { return cluster.Open(name, cfg) }}
	if name == bo.db {
		o.Cluster.Binary = bo.binary
	}
	return o, nil
}

// benchError classifies a failed benchmark of system name: a system that
// refuses its configuration is a usage error, anything else a setup
// failure.
func benchError(name string, err error) error {
	if ce := (*cluster.ConfigError)(nil); errors.As(err, &ce) {
		return usageErrorf("bench %s: %v", name, ce.Err)
	}
	return setupError(fmt.Errorf("bench %s: %w", name, err))
}

func (bo *benchOptions) print(w io.Writer, r bench.Result) error {
	if bo.json {
		return writeJSON(w, r)
	}
	printResult(w, r)
	return nil
}

func (bo *benchOptions) printComparison(w io.Writer, c bench.Comparison) error {
	if bo.json {
		return writeJSON(w, c)
	}
	printResult(w, c.A)
	fmt.Fprintln(w)
	printResult(w, c.B)
	fmt.Fprintf(w, "\n%s vs %s\n", c.A.System, c.B.System)
	if c.Rounds > 1 {
		fmt.Fprintf(w, "medians of %d rounds; ratio: the median of the rounds' ratios, range: their lowest and highest\n", c.Rounds)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "figure\t%s\t%s\tratio\t", c.A.System, c.B.System)
	if c.Rounds > 1 {
		fmt.Fprint(tw, "range\t")
	}
	fmt.Fprintln(tw)
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2fx\t", r.Figure, figure(r.A), figure(r.B), r.Ratio)
		if c.Rounds > 1 {
			fmt.Fprintf(tw, "%.2f-%.2fx\t", r.RatioMin, r.RatioMax)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// printResult prints one benchmark: its settings, a row per operation and
// the failover.
func printResult(w io.Writer, r bench.Result) {
	fmt.Fprintf(w, "%s: %d nodes, %d clients, %.0f s measured, %.0f%% reads (%s), %d-byte values, %d keys",
		r.System, r.Nodes, r.Clients, r.DurationS, 100*r.ReadRatio, r.ReadConsistency, r.ValueSize, r.Keys)
	if r.Runs > 1 {
		fmt.Fprintf(w, "; medians of %d runs (failed and unknown: totals)", r.Runs)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tops/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tfailed\tunknown\t")
	for _, s := range r.Ops {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t\n",
			s.F, figure(s.PerSecond), s.P50Ms, s.P90Ms, s.P99Ms, s.MaxMs, s.Failed, s.Unknown)
	}
	_ = tw.Flush()
	if f := r.Failover; f != nil {
		fmt.Fprintf(w, "failover: %d leader kills, next acknowledged write after p50 %.0f ms, max %.0f ms",
			len(f.Kills), f.P50Ms, f.MaxMs)
		if f.Unrecovered > 0 {
			fmt.Fprintf(w, "; %d without a write acknowledged within 10 s", f.Unrecovered)
		}
		fmt.Fprintln(w)
	}
}

// figure prints a rate or a latency with the precision it deserves.
func figure(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
