package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"chaos/checker"
	"chaos/cluster"
	"chaos/nemesis"
	"chaos/testrun"
)

// dbFlagHelp documents --db for every command that takes it.
func dbFlagHelp() string {
	return "system under test: " + strings.Join(cluster.SystemNames(), " or ") +
		", or a description file PATH.yaml (README \"Your own system\")"
}

// runOptions are chaos run's flags.
type runOptions struct {
	o         testrun.Options
	hosts     hostFlags
	nemesis   string
	keepGoing bool
}

func newRunCmd() *cobra.Command {
	ro := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one test: deploy, run load + faults, heal, check, report",
		Long: `run deploys the system under test, drives concurrent clients against it while
the nemesis injects faults, heals every fault, lets the cluster recover, runs the
final reads, checks the history and writes the run into the store:
store/<name>/<time>/ with test.json, history.jsonl, results.json, report.html,
linearizable/, nodes/<node>/ and chaos.log.

Without --nodes it runs five chaos-nodes on this machine (127.0.0.11..15).

Fault families (--nemesis):
` + nemesis.FamiliesHelp() + `
The first five act on random nodes; the storage families (power-loss, corrupt,
disk-full, eio) act on the nodes' data directories, served through chaos's
fault file system when --storage-faults is given or --nemesis names one of
them (then in the default mix too). The others are targeted (chaos heal removes
what they leave with the first five's heals): each aims at a role
the cluster reports (the leader, a node that just voted, the next leader) and runs
a short sequence that provokes one situation random faults rarely make, on a
clear stage (the other faults stopped first). Every --nemesis-interval the
schedule flips one family, picked by weight (targeted families weigh more, and
take turns); the default, all, runs every family this environment supports.

Exit status: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 setup failure.`,
		Example: `  chaos run --time-limit 20s
  chaos run --bug stale-read --nemesis partition
  chaos run --nodes-file testbed/nodes --ssh-private-key testbed/id_ed25519 --known-hosts testbed/known_hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runRun(cmd, ro) },
	}
	ro.register(cmd.Flags())
	return cmd
}

// register declares chaos run's flags on f, with their defaults. test-all
// applies a campaign file's options through the same flags.
func (ro *runOptions) register(f *pflag.FlagSet) {
	o := &ro.o
	ro.hosts.register(f)
	f.StringVar(&o.DB, "db", "chaos-node", dbFlagHelp())
	f.StringVar(&o.Workload, "workload", "register", "register or set")
	f.IntVar(&o.Keys, "keys", 10, "keys the register workload spreads over")
	f.StringVar(&o.NodeProcess, "node-process", testrun.NodeProcessChaos,
		"who runs each node: chaos (installs and starts it on its host) or container (each docker:NAME host is a container whose main process is the node: chaos starts, kills, pauses and unpauses the container, reads docker logs, and installs and wipes nothing)")
	f.StringVar(&o.ReadConsistency, "read-consistency", testrun.ReadLinearizable,
		"how reads are served: linearizable, or serializable (a node's local state: etcd's serializable reads, chaos-node's stale reads) to check a weaker read mode")
	f.StringVar(&o.Concurrency, "concurrency", "2n", "clients: a number, or Nn = N times the node count")
	f.Float64Var(&o.Rate, "rate", 0, "total ops/s target, 0 = as fast as possible")
	f.DurationVar(&o.TimeLimit, "time-limit", 60*time.Second, "length of the load phase")
	f.IntVar(&o.TestCount, "test-count", 1, "run the test this many times; stop at the first invalid (see --keep-going)")
	f.BoolVar(&ro.keepGoing, "keep-going", false, "with --test-count: run every count, then print and store the detection rate and time to the first anomaly")
	f.StringVar(&ro.nemesis, "nemesis", "", "comma list of fault families (below, e.g. lease,vote-restart), or none, or all (default: every family the environment supports but the opt-in member)")
	f.StringVar(&o.ClockStrategy, "clock-strategy", testrun.ClockAuto,
		"how the clock and lease families bend clocks: hook (chaos-node's fault hook), vdso (the nodes' processes' vDSO clock functions patched through ptrace: any x86-64 program that reads time through the vDSO, Go and the JVM included; root or CAP_SYS_PTRACE on the hosts), "+
			"faketime (nodes started under a fake clock: libfaketime for dynamically linked programs that are not Go, chaos-node natively), "+
			"system (the hosts' real clocks, NTP stopped: real VMs only, for any system; refused on hosts sharing this machine's clock), or auto: hook where the system has hooks, else vdso where the hosts allow it, else faketime where it works")
	f.DurationVar(&o.NemesisInterval, "nemesis-interval", 10*time.Second, "the longest a fault holds: each holds between two election timeouts and this, and the next starts before it ends")
	f.BoolVar(&o.StorageFaults, "storage-faults", false, "serve each node's data directory through chaos's fault file system (FUSE: /dev/fuse and root on every host), "+
		"so that the storage families (power-loss, corrupt, disk-full, eio) join the default mix; naming one in --nemesis turns it on too")
	f.StringVar(&o.StorageNames, "storage-names", "", "with storage faults, when the fault file system makes a name change durable: posix (at its directory's fsync, as fsync(2) promises; the default) or ordered (at any fsync, as the journals of ext4 and XFS commit it)")
	f.StringSliceVar(&o.CorruptFiles, "corrupt-file", nil, "the files the corrupt family damages, a comma list of wal (the newest segment's newest records), snapshot (the newest), random (default: all three)")
	f.StringSliceVar(&o.CorruptHows, "corrupt-how", nil, "how the corrupt family damages a file, a comma list of flip (a bit), zero (a range), truncate (default: all three)")
	f.StringVar(&o.Store, "store", "./store", "where runs are written")
	f.Uint64Var(&o.Seed, "seed", 0, "seed for every random choice (default random; printed at start)")
	f.StringVar(&o.Name, "name", "", "test name in the store: letters, digits and . _ + - (default from db, workload, nemesis)")
	f.BoolVar(&o.LeaveDBRunning, "leave-db-running", false, "don't tear down at the end")
	f.StringArrayVar(&o.Bugs, "bug", nil, "start chaos-node with a planted bug (repeatable)")
	f.DurationVar(&o.CheckerTimeout, "checker-timeout", 60*time.Second, "bound on the linearizability search")
	f.StringVar(&o.Checker, "checker", checker.AlgorithmAuto, checkerFlagUsage)
	f.StringVar(&o.Binary, "binary", "", "binary to deploy (default: this chaos binary, or the hosts' etcd)")
	f.DurationVar(&o.RequestTimeout, "request-timeout", time.Second, "client request timeout; past it the op is recorded as info")
	f.DurationVar(&o.Recovery, "recovery", 0, "time the healed cluster gets before the final reads, and its bound to recover in; the load runs at least this long after the final heal "+
		"(default: the system's stated recovery bound, 5s for chaos-node and etcd, timing.recovery of a description; else 5s, reported against but not failed)")
}

// options are the campaign options the flags give, SSH warnings going to
// stderr; errors are usage errors.
func (ro *runOptions) options(stderr io.Writer) (testrun.Options, error) {
	o := ro.o
	o.Argv = os.Args
	var err error
	if o.Nodes, err = ro.hosts.hosts(); err != nil {
		return o, err
	}
	if o.SSH, err = ro.hosts.sshConfig(stderr); err != nil {
		return o, err
	}
	if ro.nemesis != "" {
		o.Nemesis = strings.Split(ro.nemesis, ",")
	}
	return o, nil
}

func runRun(cmd *cobra.Command, ro *runOptions) error {
	warnPasswordFlag(cmd)
	o, err := ro.options(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if ro.keepGoing && o.TestCount < 2 {
		return usageErrorf("--keep-going goes with --test-count N, N > 1")
	}
	if o.TestCount > 1 {
		return runRepeated(cmd, o, ro.keepGoing)
	}

	ctx, hard, stop := interrupts(cmd.Context(), cmd)
	defer stop()
	res, err := testrun.Run(ctx, o, runEnv(cmd, hard))
	switch {
	case errors.Is(err, testrun.ErrUsage):
		return usageErrorf("run: %v", err)
	case err != nil:
		return setupError(fmt.Errorf("run: %w", err))
	}
	switch res.Valid {
	case checker.Valid:
		return nil
	case checker.Invalid:
		return &exitError{code: exitInvalid}
	}
	return &exitError{code: exitUnknown}
}

// interrupts returns a context cancelled by the first SIGINT or SIGTERM and
// a second one cancelled by the next.
func interrupts(parent context.Context, cmd *cobra.Command) (soft, hard context.Context, stop func()) {
	soft, cancelSoft := context.WithCancel(parent)
	hard, cancelHard := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for n := 0; n < 2; n++ {
			select {
			case <-sig:
			case <-done:
				return
			}
			if n == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "\ninterrupted: stopping the load, healing, pulling logs and checking (interrupt again to stop after healing)")
				cancelSoft()
			} else {
				fmt.Fprintln(cmd.ErrOrStderr(), "\ninterrupted again: stopping after healing")
				cancelHard()
			}
		}
	}()
	return soft, hard, func() {
		signal.Stop(sig)
		close(done)
		cancelSoft()
		cancelHard()
	}
}
