package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"chaos/faultfs"
)

// faultFSOptions are the flags of `chaos faultfs` and its subcommands.
type faultFSOptions struct {
	backing, mount, control string
	names                   string
	undoMemoryMiB           int64
	timeout                 time.Duration
	kind, on                string
	duration                time.Duration
}

func newFaultFSCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "faultfs",
		Short: "The fault file system that loses what was not fsynced at a power loss (run by chaos on each host)",
		Long: `faultfs is the FUSE file system a node's data directory is mounted through
when storage faults are on: it passes reads and writes through to a backing
directory and remembers what is not durable yet (data until the file is
fsynced, names until their directory is, or with --names ordered until any
fsync, as ext4's journal commits them), so that a power loss can drop it;
it can also make writes or fsyncs fail with ENOSPC or EIO (the durability
model: faultfs/doc.go; the control protocol: docs/FORMATS.md, "Fault file
system"). chaos starts, steers and stops it; you need it only to look at it.

serve mounts --backing at --mount (root only; /dev/fuse) and serves it until
SIGTERM or SIGINT, then unmounts. The old bytes it keeps to undo unsynced
overwrites and truncations stay in memory up to --undo-memory-mib (64 MiB);
past that they spill to unlinked files in the backing directory's hidden
trash, and a change whose old bytes cannot be spilled (the backing disk
full) fails with that error, counted in status as undo_refused. Its exit code is 0 when it unmounted
cleanly, 255 when it could not start (the line says what is missing) or
could not end cleanly (files of the mount still open: it detached the
mount lazily; or the mount was unmounted from outside), 254 for bad flags.

power-loss drops all that is not durable (kill the programs using the
mount first) and prints what it dropped; errors injects errors; clear ends
them; status prints what is pending. Each prints one JSON line, and exits
255 when the file system cannot be reached within --timeout or refuses.`,
		Example: `  chaos faultfs serve --backing /var/lib/chaos/n1/data.backing \
    --mount /var/lib/chaos/n1/data --control /var/lib/chaos/n1/faultfs.sock
  chaos faultfs errors --control /var/lib/chaos/n1/faultfs.sock --kind enospc --on writes --for 30s
  chaos faultfs power-loss --control /var/lib/chaos/n1/faultfs.sock`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newFaultFSServeCmd(), newFaultFSPowerLossCmd(), newFaultFSErrorsCmd(),
		newFaultFSClearCmd(), newFaultFSStatusCmd())
	return cmd
}

func newFaultFSServeCmd() *cobra.Command {
	var o faultFSOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Mount and serve the fault file system until SIGTERM or SIGINT",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.backing == "" || o.mount == "" || o.control == "" {
				return usageErrorf("faultfs serve: --backing, --mount and --control are required")
			}
			names, err := faultfs.ParseNames(o.names)
			if err != nil {
				return usageErrorf("faultfs serve: --names: %v", err)
			}
			if o.undoMemoryMiB < 1 || o.undoMemoryMiB > maxUndoMemoryMiB {
				return usageErrorf("faultfs serve: --undo-memory-mib %d: want 1 to %d", o.undoMemoryMiB, maxUndoMemoryMiB)
			}
			// One P: the server's goroutines spend their time blocked
			// in read(2) on /dev/fuse and in fsyncs. With more Ps, each
			// blocked reader keeps a P that the runtime's monitor keeps
			// taking back and handing to a newly woken thread: wakeups
			// that cost the node under test CPU on a small host. In
			// chaos bench --storage-faults (2 cores, 3 nodes) one P
			// raised the nodes' write throughput on the file system by
			// about 15%. (Restored for a test that runs the command.)
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			// A soft memory limit past the undo bound: the garbage that
			// runs of old bytes leave as they merge is collected before
			// the heap doubles (GOGC), not after. (Restored likewise.)
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.undoMemoryMiB<<20 + serveMemoryHeadroom))
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			if err := faultfs.Run(ctx, o.backing, o.mount, o.control, faultfs.Options{Names: names, UndoMemory: o.undoMemoryMiB << 20}, log); err != nil {
				return setupError(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.backing, "backing", "", "the directory that holds the files (required)")
	f.StringVar(&o.mount, "mount", "", "the empty directory to mount the file system on (required)")
	f.StringVar(&o.control, "control", "", "the control socket to create (required)")
	f.StringVar(&o.names, "names", string(faultfs.NamesPOSIX), "when a name change is durable: posix (at its directory's fsync) or ordered (at any fsync, as ext4's and XFS's journals commit it)")
	f.Int64Var(&o.undoMemoryMiB, "undo-memory-mib", faultfs.DefaultUndoMemory>>20, "the most MiB of old file bytes kept in memory to undo unsynced changes at a power loss; past it they spill to unlinked files in the backing directory's hidden trash")
	return cmd
}

// serveMemoryHeadroom is what `faultfs serve`'s soft memory limit allows
// past the undo bound: the server's own needs (FUSE buffers, a spill
// chunk) and the slack of merged runs.
const serveMemoryHeadroom = 64 << 20

// maxUndoMemoryMiB is the largest --undo-memory-mib: 1 TiB.
const maxUndoMemoryMiB = 1 << 20

// newFaultFSClientCmd is a client subcommand: it checks --control, calls
// do with a context bounded by --timeout, and prints its answer.
func newFaultFSClientCmd(use, short string, o *faultFSOptions, check func() error, do func(context.Context, faultfs.Client) (any, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.control == "" {
				return usageErrorf("faultfs %s: --control is required", use)
			}
			if check != nil {
				if err := check(); err != nil {
					return usageErrorf("faultfs %s: %v", use, err)
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			out, err := do(ctx, faultfs.Client{Socket: o.control})
			if err != nil {
				return setupError(err)
			}
			b, err := json.Marshal(out)
			if err != nil {
				return setupError(err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	cmd.Flags().StringVar(&o.control, "control", "", "the file system's control socket, as given to serve (required)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Second, "how long to wait for a file system that is starting")
	return cmd
}

func newFaultFSPowerLossCmd() *cobra.Command {
	var o faultFSOptions
	return newFaultFSClientCmd("power-loss", "Drop all that is not durable (the programs using the mount must be dead) and print what it was", &o, nil,
		func(ctx context.Context, c faultfs.Client) (any, error) { return c.PowerLoss(ctx) })
}

func newFaultFSErrorsCmd() *cobra.Command {
	var o faultFSOptions
	check := func() error {
		if err := (faultfs.ErrorMode{Kind: o.kind, On: o.on}).Validate(); err != nil {
			return err
		}
		if o.duration < 0 {
			return fmt.Errorf("--for %v is negative", o.duration)
		}
		if o.duration > faultfs.MaxForMS*time.Millisecond {
			return fmt.Errorf("--for %v is past the limit of 24h", o.duration)
		}
		return nil
	}
	cmd := newFaultFSClientCmd("errors", "Make writes, fsyncs or both fail with ENOSPC or EIO, until cleared or for --for", &o, check,
		func(ctx context.Context, c faultfs.Client) (any, error) {
			return c.SetErrors(ctx, faultfs.ErrorsRequest{Kind: o.kind, On: o.on, ForMS: o.duration.Milliseconds()})
		})
	f := cmd.Flags()
	f.StringVar(&o.kind, "kind", "", "the error: enospc or eio (required)")
	f.StringVar(&o.on, "on", faultfs.OnBoth, "what fails: writes, fsyncs or both")
	f.DurationVar(&o.duration, "for", 0, "how long the errors last (0: until cleared; at most 24h)")
	return cmd
}

func newFaultFSClearCmd() *cobra.Command {
	var o faultFSOptions
	return newFaultFSClientCmd("clear", "End error injection", &o, nil,
		func(ctx context.Context, c faultfs.Client) (any, error) { return c.ClearErrors(ctx) })
}

func newFaultFSStatusCmd() *cobra.Command {
	var o faultFSOptions
	return newFaultFSClientCmd("status", "Print what is not durable, and the error injection in force", &o, nil,
		func(ctx context.Context, c faultfs.Client) (any, error) { return c.Status(ctx) })
}
