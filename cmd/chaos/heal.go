package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"chaos/cluster"
	"chaos/control"
	"chaos/db"
	"chaos/db/described"
	"chaos/nemesis"
)

// healOptions are the flags of `chaos heal`.
type healOptions struct {
	hostFlags
	db      string
	dataDir string
	timeout time.Duration
}

func newHealCmd() *cobra.Command {
	var o healOptions
	cmd := &cobra.Command{
		Use:   "heal",
		Short: "Remove every fault chaos can leave on nodes (iptables, tc, SIGSTOP, clock)",
		Long: `heal removes every fault chaos can leave behind on the nodes, whether or not
this process injected it: for use after a controller crash or an interrupt.
On every host it sends SIGCONT to the node's daemon, removes chaos's iptables
chains and tc qdiscs, clears chaos-node's fault hooks (clock, drops, packet
faults) and, where chaos stopped NTP to set the system clock, sets the clock
and starts NTP again. Killed nodes stay down: the next run redeploys them.

Without --nodes it heals the five local nodes n1..n5 (127.0.0.11..15).
Hosts are named n1, n2, ... in the order given, as chaos run names them.

Exit status: 0 every host healed, 254 bad arguments, 255 some host could not
be reached or healed (one line each on stderr).`,
		Example: `  chaos heal
  chaos heal --nodes-file testbed/nodes --ssh-private-key testbed/id_ed25519 --known-hosts testbed/known_hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHeal(cmd, o) },
	}
	f := cmd.Flags()
	o.hostFlags.register(f)
	f.StringVar(&o.db, "db", "chaos-node", dbFlagHelp())
	f.StringVar(&o.dataDir, "data-dir", "", "where the nodes keep their data and pidfiles (default "+db.DefaultLayout().DataDir+", or in local mode "+cluster.LocalDataDir()+")")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound on the whole heal")
	return cmd
}

func runHeal(cmd *cobra.Command, o healOptions) error {
	warnPasswordFlag(cmd)
	hosts, err := o.validate()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	local := len(hosts) == 0
	nodes := cluster.Nodes(hosts)
	d, err := o.newDB(nodes)
	if err != nil {
		return err
	}
	c, outcome, err := o.connect(ctx, cmd.ErrOrStderr(), d, nodes, hosts)
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range c.Remotes {
			_ = r.Close()
		}
	}()
	c.SharedClock = local
	for _, h := range nemesis.HealEach(ctx, c, nemesis.HealFaults(local)) {
		outcome[h.Node.Name] = h.Err
	}
	return printHeal(cmd.OutOrStdout(), cmd.ErrOrStderr(), nodes, outcome)
}

// validate checks the flags and returns the hosts to heal, none in local
// mode.
func (o healOptions) validate() ([]string, error) {
	if _, err := described.Lookup(o.db); err != nil {
		return nil, usageErrorf("%v", err)
	}
	if o.timeout <= 0 {
		return nil, usageErrorf("--timeout %v: want a positive duration such as 2m", o.timeout)
	}
	return o.hosts()
}

// connect reaches the nodes' hosts, over SSH (hosts, in the nodes' order)
// or locally (no hosts), and builds the cluster of those it reached. The
// outcome holds the dial error of each node it could not reach. SSH
// warnings go to stderr. Its error is a bad SSH configuration (254).
func (o healOptions) connect(ctx context.Context, stderr io.Writer, d db.DB, nodes []db.Node, hosts []string) (*nemesis.Cluster, map[string]error, error) {
	remotes := make([]control.Remote, len(nodes))
	errs := make([]error, len(nodes))
	if len(hosts) == 0 {
		for i, n := range nodes {
			remotes[i] = control.NewLocal(n.Name)
		}
	} else {
		cfg, err := o.sshConfig(stderr)
		if err != nil {
			return nil, nil, err
		}
		dialer, err := control.NewSSHDialer(cfg)
		if err != nil {
			return nil, nil, usageErrorf("%v", err)
		}
		var wg sync.WaitGroup
		for i, h := range hosts {
			wg.Go(func() { remotes[i], errs[i] = dialer.Dial(ctx, h) })
		}
		wg.Wait()
	}
	c, outcome := reached(d, nodes, remotes, errs)
	return c, outcome, nil
}

// newDB is the system under test on nodes, where --data-dir (or local
// mode) says it keeps its data.
func (o healOptions) newDB(nodes []db.Node) (db.DB, error) {
	layout := db.DefaultLayout()
	switch {
	case o.dataDir != "":
		layout.DataDir = o.dataDir
	case o.local():
		layout = cluster.LocalLayout()
	}
	d, err := described.Open(o.db, db.Config{Nodes: nodes, Layout: layout})
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return d, nil
}

// reached is the cluster of the nodes whose host was reached, with the system under test
// d and its hook addresses, and the dial error of every other node.
func reached(d db.DB, nodes []db.Node, remotes []control.Remote, errs []error) (*nemesis.Cluster, map[string]error) {
	c := &nemesis.Cluster{Remotes: map[string]control.Remote{}, DB: d}
	outcome := map[string]error{}
	for i, n := range nodes {
		if errs[i] != nil {
			outcome[n.Name] = errs[i]
			continue
		}
		c.Nodes = append(c.Nodes, n)
		c.Remotes[n.Name] = remotes[i]
	}
	c.HookAddrs = cluster.HookAddrs(d, c.Nodes)
	return c, outcome
}

// printHeal writes a line per node, in order: "healed" on stdout, or why
// not on stderr. It returns the exit error (255) when some node failed.
func printHeal(out, errOut io.Writer, nodes []db.Node, outcome map[string]error) error {
	failed := 0
	for _, n := range nodes {
		if err := outcome[n.Name]; err != nil {
			failed++
			fmt.Fprintf(errOut, "chaos: heal %s (%s): %s\n", n.Name, n.Addr, strings.ReplaceAll(err.Error(), "\n", "; "))
			continue
		}
		fmt.Fprintf(out, "%s (%s): healed\n", n.Name, n.Addr)
	}
	if failed > 0 {
		return setupError(fmt.Errorf("heal failed on %d of %d hosts", failed, len(nodes)))
	}
	return nil
}
