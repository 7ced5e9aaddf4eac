package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"chaos/faultproxy"
)

// faultProxyOptions are the flags of `chaos fault-proxy serve` and `set`.
type faultProxyOptions struct {
	dir      string
	owner    string
	timeout  time.Duration
	maxConns int
}

func newFaultProxyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fault-proxy",
		Short: "The transparent proxy that delays and rate-limits links where netem is missing (run by chaos on each host)",
		Long: `fault-proxy is what the packet and election-delay faults run on each host
whose kernel has no netem qdisc: iptables REDIRECTs a node's connections
toward its peers to it, and it forwards each to where it was going, delaying
and rate-limiting the bytes of each direction as the link's behavior says
(docs/FORMATS.md, "Nemesis operations": the proxy mechanism). chaos starts,
steers and stops it; you need it only to look at it.

serve runs the proxy, with its control socket in --dir (control.sock; the
directory is left mode 0700, and refused if another user owns it). It
forwards at most --max-conns connections at once and closes one accepted past
that at once (a reset); a failed accept (out of file descriptors, say) is
tried again after a pause of 5ms doubled up to 1s, so the proxy stays up. set
replaces the links one owner (a node) set, and prints the proxy's status: the
port it takes redirected connections on, every owner's links, and its
connections (open, max, refused at the cap).`,
		Example: `  chaos fault-proxy serve --dir /var/lib/chaos/fault-proxy
  chaos fault-proxy set --dir /var/lib/chaos/fault-proxy --owner n1 \
    '[{"from":"10.77.0.11","to":"10.77.0.12","delay_ms":75,"jitter_ms":10}]'`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newFaultProxyServeCmd(), newFaultProxySetCmd())
	return cmd
}

func newFaultProxyServeCmd() *cobra.Command {
	var o faultProxyOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the fault proxy until SIGTERM or SIGINT",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.dir == "" {
				return usageErrorf("fault-proxy serve: --dir is required (where the control socket goes)")
			}
			if o.maxConns < 1 || o.maxConns > faultproxy.MaxConnsLimit {
				return usageErrorf("fault-proxy serve: --max-conns %d is outside [1, %d]", o.maxConns, faultproxy.MaxConnsLimit)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			if err := faultproxy.Run(ctx, faultproxy.Config{Dir: o.dir, MaxConns: o.maxConns, Log: log}); err != nil {
				return setupError(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "the proxy's directory: its control socket goes there (required; left mode 0700)")
	f.IntVar(&o.maxConns, "max-conns", faultproxy.DefaultMaxConns,
		fmt.Sprintf("most connections forwarded at once, in [1, %d]; one past it is closed at once", faultproxy.MaxConnsLimit))
	return cmd
}

func newFaultProxySetCmd() *cobra.Command {
	var o faultProxyOptions
	cmd := &cobra.Command{
		Use:   "set LINKS",
		Short: "Replace the links --owner set in the running proxy with LINKS (a JSON array; [] removes them)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.dir == "" || o.owner == "" {
				return usageErrorf("fault-proxy set: --dir and --owner are required")
			}
			var links []faultproxy.Link
			if err := json.Unmarshal([]byte(args[0]), &links); err != nil {
				return usageErrorf("fault-proxy set: LINKS: %v (want a JSON array of {\"from\", \"to\", \"delay_ms\", \"jitter_ms\", \"rate_kbit\"})", err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			st, err := faultproxy.SetLinks(ctx, faultproxy.ControlSocket(o.dir), o.owner, links)
			if err != nil {
				return setupError(err)
			}
			b, err := json.Marshal(st)
			if err != nil {
				return setupError(err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "the proxy's directory, as given to serve (required)")
	f.StringVar(&o.owner, "owner", "", "whose links these are: a node's name (required)")
	f.DurationVar(&o.timeout, "timeout", 5*time.Second, "how long to wait for a proxy that is starting")
	return cmd
}
