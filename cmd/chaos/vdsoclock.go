package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"chaos/internal/sleep"
	"chaos/nemesis/vdsoclock"
)

// vdsoClockOptions are the flags of `chaos vdso-clock`.
type vdsoClockOptions struct {
	pid                 int
	started             string
	tree                bool
	realtime, monotonic time.Duration
	rate                float64
	maxLead             time.Duration
	unlessPatched       bool
}

func newVDSOClockCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vdso-clock",
		Short: "Skew the clocks of a node's processes by patching their vDSO (run by chaos on each host)",
		Long: `vdso-clock is what the vdso clock strategy runs on each host: it moves the
clocks one node's processes read, and no other process's. It seizes every
thread of a process with ptrace, maps a page of code and a data page into it
near its vDSO, and rewrites the vDSO's clock_gettime, gettimeofday and time to
jump there: the code reads the kernel's clock and adds the data page's offset
and rate. Only clock readings move: sleeps, timers and timed waits still run
on the kernel's clock. A program that makes the raw syscall or reads the TSC
is out of reach. x86-64 only; it needs root or CAP_SYS_PTRACE.

set makes the realtime clocks (REALTIME, its coarse variant, TAI) read
--realtime off true time and the monotonic ones (MONOTONIC, its raw and coarse
variants, BOOTTIME) --monotonic off, from now on running at --rate; a process
patched already only has its data page rewritten, and its monotonic clocks
never move back. heal puts the vDSO's own bytes back (the pages stay mapped:
a thread may be inside them); monotonic clocks that read ahead first run at
half speed until they have given it back (at most a minute), so that no clock
reads back. show prints what each process's clocks show.

--pid must be the process the node's start record (--started, NAME.started:
"PID STARTTIME") names; with --tree its descendants are patched too. Each
process gets a JSON line: its pid, the code page's address, the functions
redirected and the offsets read back from its data page, or the error.`,
		Example: `  chaos vdso-clock set --pid 4242 --started /var/lib/chaos/n1/n1.started --tree --realtime 5s
  chaos vdso-clock set --pid 4242 --started /var/lib/chaos/n1/n1.started --rate 2
  chaos vdso-clock heal --pid 4242 --started /var/lib/chaos/n1/n1.started --tree`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newVDSOClockSubCmd("set", "Patch the processes (or rewrite their data pages) so that their clocks show the skew"),
		newVDSOClockSubCmd("heal", "Put the vDSO's own bytes back in the processes"),
		newVDSOClockSubCmd("show", "Print what the processes' clocks show"))
	return cmd
}

func newVDSOClockSubCmd(action, short string) *cobra.Command {
	o := vdsoClockOptions{rate: 1} // heal and show have no --rate
	cmd := &cobra.Command{
		Use:   action,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.pid <= 1 || o.started == "" {
				return usageErrorf("vdso-clock %s: --pid (above 1) and --started (the node's start record) are required", action)
			}
			s := vdsoclock.Skew{Realtime: o.realtime, Monotonic: o.monotonic, Rate: o.rate, MaxLead: o.maxLead}
			if o.rate == 0 { // 0 would mean true time to Skew
				return usageErrorf("vdso-clock %s: --rate 0: want a rate above 0 and at most 1000 (1 is true time)", action)
			}
			if err := s.Validate(); err != nil {
				return usageErrorf("vdso-clock %s: %v", action, err)
			}
			if err := vdsoclock.Started(o.pid, o.started); err != nil {
				return usageErrorf("vdso-clock %s: %v", action, err)
			}
			pids := []int{o.pid}
			if o.tree {
				var err error
				if pids, err = vdsoclock.Tree(o.pid); err != nil {
					return setupError(err)
				}
			}
			if action == "heal" {
				vdsoDrain(cmd.Context(), pids)
			}
			return vdsoClockEach(cmd.OutOrStdout(), action, pids, s, o.unlessPatched)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.pid, "pid", 0, "the node's process (required)")
	f.StringVar(&o.started, "started", "", "the node's start record, which must name --pid (required)")
	f.BoolVar(&o.tree, "tree", false, "the process's descendants too")
	if action == "set" {
		f.DurationVar(&o.realtime, "realtime", 0, "the realtime clocks' offset from true time (either sign)")
		f.DurationVar(&o.monotonic, "monotonic", 0, "the monotonic clocks' offset (at least what they show now)")
		f.Float64Var(&o.rate, "rate", 1, "how fast the clocks run from now on (1 is true time)")
		f.DurationVar(&o.maxLead, "max-lead", 0, "the most the clocks may read ahead of true time: a fast clock stops gaining there (0: no bound); a program that waits for deadlines read from its clock waits that much longer")
		f.BoolVar(&o.unlessPatched, "unless-patched", false, "leave a process patched already as it is (a node's restarted process gets its fault again; one that was not restarted keeps what it shows)")
	}
	return cmd
}

// maxDrain bounds the wait before a heal for monotonic clocks to give
// back what they read ahead (vdsoclock.Drain): past it, a clock still
// ahead reads back by what is left. chaos's own faults leave them at most
// a few election timeouts ahead, drained in twice that.
const maxDrain = time.Minute

// vdsoDrain slows the clocks of each of pids that read ahead of the
// kernel's, and waits until the furthest ahead has given it back (at most
// maxDrain), so that the heal after it moves no clock back. A process it
// cannot drain is left to the heal, which reports it.
func vdsoDrain(ctx context.Context, pids []int) {
	var longest time.Duration
	for _, pid := range pids {
		if d, err := vdsoclock.Drain(pid); err == nil {
			longest = max(longest, d)
		}
	}
	_ = sleep.For(ctx, min(longest, maxDrain))
}

// vdsoClockEach runs action on each of pids and prints a line for each.
// It fails when the first (the node's own process) fails; a descendant
// that exited meanwhile is reported in its line.
func vdsoClockEach(w io.Writer, action string, pids []int, s vdsoclock.Skew, unlessPatched bool) error {
	var first error
	for i, pid := range pids {
		var p *vdsoclock.Patched
		var err error
		switch action {
		case "set":
			if p, err = vdsoclock.Inspect(pid); err == nil && (p == nil || !unlessPatched) {
				p, err = vdsoclock.Patch(pid, s)
			}
		case "heal":
			p, err = vdsoclock.Heal(pid)
		default:
			p, err = vdsoclock.Inspect(pid)
		}
		if err != nil && i == 0 {
			first = err
		}
		line := vdsoclock.LineOf(pid, p, err, action == "heal")
		b, jerr := json.Marshal(line)
		if jerr != nil {
			return setupError(jerr)
		}
		if _, werr := fmt.Fprintln(w, string(b)); werr != nil {
			return setupError(werr)
		}
	}
	if first != nil {
		return setupError(errors.New("vdso-clock: " + first.Error()))
	}
	return nil
}
