package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"chaos/cluster"
	"chaos/control"
	"chaos/db"
	"chaos/internal/termsafe"
	"chaos/nemesis"
	"chaos/testrun"
	"chaos/testrun/runrecord"
)

// healOptions are the flags of `chaos heal`.
type healOptions struct {
	hostFlags
	db      string // "": the newest run's, from store
	store   string
	dataDir string
	timeout time.Duration
	// nodeProcess is --node-process: "container" when every host is a
	// container that is the node ("": the newest run's, else chaos).
	nodeProcess string
}

// containerNodes says whether the hosts are containers that are the nodes.
func (o healOptions) containerNodes() bool { return o.nodeProcess == testrun.NodeProcessContainer }

func newHealCmd() *cobra.Command {
	var o healOptions
	cmd := &cobra.Command{
		Use:   "heal",
		Short: "Remove every fault chaos can leave on nodes (iptables, tc, SIGSTOP, clock)",
		Long: `heal removes every fault chaos can leave behind on the nodes, whether or not
this process injected it: for use after a controller crash or an interrupt.
On every host it sends SIGCONT to the node's daemon, removes chaos's iptables
chains and tc qdiscs, stops chaos's fault proxy, clears chaos-node's fault
hooks (clock, drops, packet faults) and, where chaos stopped NTP to set the system clock, sets the clock
and starts NTP again. Of the fault file systems under the nodes' data
directories (storage faults), it ends the error injection where the node
runs and unmounts them where it does not. Killed nodes stay down: the next
run redeploys them. Containers (docker:NAME hosts) that are paused are
unpaused first; a container that is stopped is left down, healed: nothing
of chaos's is in force in it (its rules went with its network namespace,
its fault file system with its mounts), whether it is the node
(--node-process container) or holds one chaos started.

Without --db it heals the newest run in --store (store/latest/test.json),
the run a crashed controller left, and says which: its system, its hosts
(unless --nodes or --nodes-file names others) and its SSH user and port
(unless their flags are given). What a host must prove and what heal logs
in with come from the operator alone, never from the store: the key files
(--ssh-private-key, default ~/.ssh/id_ed25519 and id_rsa, and the agent),
the known_hosts file (--known-hosts, default ~/.ssh/known_hosts), host key
checking, and the password (never recorded: give it again). The password
is sent, to a login prompt or to sudo, only to a host whose key is in that
known_hosts, even with --strict-host-key-checking=false. The store is
believed only if it, the latest link, the run it points at, test.json and
every directory above them belong to you (or root; under sudo, SUDO_UID's
user too) and no one else can write them. Heal names the hosts before it
dials any. Without --db and without a run in --store it refuses: it cannot
know which system's processes to resume.

With --db it heals that system on the hosts the flags name: without --nodes,
the five local nodes n1..n5 (127.0.0.11..15). Hosts are named n1, n2, ... in
the order given, as chaos run names them.

Exit status: 0 every host healed, 254 bad arguments, no run to heal or a
store others could have written, 255 some host could not be reached,
verified or healed (one line each on stderr).`,
		Example: `  chaos heal
  chaos heal --store /tmp/store
  chaos heal --db etcd --nodes-file testbed/nodes --ssh-private-key testbed/id_ed25519 --known-hosts testbed/known_hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHeal(cmd, o) },
	}
	f := cmd.Flags()
	o.hostFlags.register(f)
	f.StringVar(&o.db, "db", "", dbFlagHelp()+" (default: the system of the newest run in --store)")
	f.StringVar(&o.store, "store", "./store", "where chaos run wrote its runs: without --db, the newest one is healed")
	f.StringVar(&o.dataDir, "data-dir", "", "where the nodes keep their data and pidfiles (default "+db.DefaultLayout().DataDir+", or in local mode "+cluster.LocalDataDir()+")")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound on the whole heal")
	f.StringVar(&o.nodeProcess, "node-process", "", "container: every host is a container that is the node (as chaos run --node-process); a paused one is unpaused, a stopped one left as it is (default: the newest run's, else chaos)")
	return cmd
}

func runHeal(cmd *cobra.Command, o healOptions) error {
	warnPasswordFlag(cmd)
	hosts, err := o.resolve(cmd.OutOrStdout(), cmd.ErrOrStderr(), cmd.Flags().Changed)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	if hosts, err = control.ExpandCompose(ctx, hosts, control.DockerConfig{}); err != nil {
		return setupError(err)
	}
	local := len(hosts) == 0
	nodes := cluster.Nodes(hosts)
	layout, err := o.layout(local)
	if err != nil {
		return err
	}
	d, err := o.newDB(nodes, layout)
	if err != nil {
		return err
	}
	c, outcome, err := o.connect(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), d, nodes, hosts)
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range c.Remotes {
			_ = r.Close()
		}
	}()
	c.SharedClock = local
	c.FaultProxy = nemesis.NewFaultProxy(layout, !local)
	c.VDSOClock = nemesis.NewVDSOClock(layout, !local)
	for _, h := range nemesis.HealEach(ctx, c, nemesis.HealFaults(local)) {
		outcome[h.Node.Name] = h.Err
	}
	return printHeal(cmd.OutOrStdout(), cmd.ErrOrStderr(), nodes, outcome)
}

// resolve checks the flags and returns the hosts to heal, none in local
// mode. Without --db it takes the system, and the hosts, SSH user and port
// whose flags were not given (changed says which were), from the newest
// run in the store, once storeTrust accepts it, and says on out which run
// that is; on warn, which of the run's SSH settings it did not take.
func (o *healOptions) resolve(out, warn io.Writer, changed func(flag string) bool) ([]string, error) {
	if o.timeout <= 0 {
		return nil, usageErrorf("--timeout %v: want a positive duration such as 2m", o.timeout)
	}
	hosts, err := o.hosts()
	if err != nil {
		return nil, err
	}
	if o.db == "" {
		runDir, err := newStoreTrust(os.Geteuid(), os.Getenv("SUDO_UID")).checkRun(o.store)
		if err != nil {
			return nil, err
		}
		rec, run, err := latestRun(o.store, runDir)
		if err != nil {
			return nil, err
		}
		if o.local() {
			hosts = rec.Nodes
		}
		o.fromRun(rec, changed)
		fmt.Fprintf(out, "healing run %s, started %s: %s\n", run, rec.Started, healTarget(rec, hosts))
		noteUntrusted(warn, rec.SSH, changed)
	}
	if _, err := cluster.Lookup(o.db); err != nil {
		return nil, usageErrorf("%v", err)
	}
	return hosts, nil
}

// latestRun reads the test.json of the newest run in store, from runDir
// (where storeTrust found its latest link to lead; "" for none), and
// names the run as <name>/<time>. No run there is a usage error (254)
// saying what to give instead.
func latestRun(store, runDir string) (runrecord.TestRecord, string, error) {
	link := filepath.Join(store, "latest")
	if runDir == "" {
		return runrecord.TestRecord{}, "", usageErrorf("no run to heal: %s does not exist; give --store DIR where chaos run wrote its runs, "+
			"or --db SYSTEM (with --nodes or --nodes-file; none: local mode) to heal without a run", filepath.Join(link, "test.json"))
	}
	rec, err := runrecord.ReadTestRecord(runDir)
	switch {
	case err != nil:
		return rec, "", usageErrorf("the newest run in %s: %v; give --db to heal without it", store, err)
	case rec.DB == "":
		return rec, "", usageErrorf("%s names no system (db); give --db", filepath.Join(link, "test.json"))
	}
	run, err := os.Readlink(link)
	if err != nil {
		run = link
	}
	return rec, run, nil
}

// fromRun takes the system of the run rec records and, for the SSH user
// and port whose flags were not given, the run's. Never the host key
// checking, the known_hosts file or the key files: what a host must prove
// and what heal logs in with come from the operator alone.
func (o *healOptions) fromRun(rec runrecord.TestRecord, changed func(flag string) bool) {
	o.db = rec.DB
	if !changed("node-process") {
		o.nodeProcess = rec.NodeProcess
	}
	s := rec.SSH
	if s == nil {
		return
	}
	if !changed("username") {
		o.user = s.User
	}
	if !changed("ssh-port") && s.Port != 0 {
		o.sshPort = s.Port
	}
}

// noteUntrusted says on warn which of the run's SSH settings heal did not
// take, and how to give them if the operator trusts them.
func noteUntrusted(warn io.Writer, s *runrecord.SSHRecord, changed func(flag string) bool) {
	if s == nil {
		return
	}
	var flags []string
	if !changed("ssh-private-key") && len(s.PrivateKeys) > 0 {
		flags = append(flags, "--ssh-private-key "+control.ShellQuote(s.PrivateKeys[0]))
	}
	if !changed("known-hosts") && s.KnownHosts != "" {
		flags = append(flags, "--known-hosts "+control.ShellQuote(s.KnownHosts))
	}
	if !changed("strict-host-key-checking") && !s.StrictHostKeyChecking {
		flags = append(flags, "--strict-host-key-checking=false")
	}
	if len(flags) > 0 {
		fmt.Fprintf(warn, "chaos: note: heal takes keys, known_hosts and host key checking only from its flags, never from the store; the run used %s: give them again if you trust them\n",
			termsafe.Escape(strings.Join(flags, " ")))
	}
}

// printHosts names on out, before any is dialed, the hosts heal will log
// in to: none in local mode.
func printHosts(out io.Writer, nodes []db.Node, hosts []string, port int) {
	if len(hosts) == 0 {
		return
	}
	words := make([]string, len(hosts))
	for i, h := range hosts {
		words[i] = nodes[i].Name + " " + control.HostAddr(h, port)
	}
	fmt.Fprintf(out, "hosts: %s\n", termsafe.Escape(strings.Join(words, ", ")))
}

// healTarget says in words what a heal of the run rec records acts on.
func healTarget(rec runrecord.TestRecord, hosts []string) string {
	where := "local mode"
	if len(hosts) > 0 {
		where = fmt.Sprintf("%d hosts", len(hosts))
	}
	nem := "all"
	if len(rec.Nemesis) > 0 {
		nem = strings.Join(rec.Nemesis, ",")
	}
	return fmt.Sprintf("%s on %s, nemesis %s", rec.DB, where, nem)
}

// connect reaches the nodes' hosts, over SSH or through the Docker Engine
// (hosts, in the nodes' order, named on out before any is dialed) or locally (no hosts), and builds the
// cluster of those it reached. The outcome holds the dial error of each
// node it could not reach. SSH warnings go to stderr. Its error is a bad
// SSH configuration (254).
func (o healOptions) connect(ctx context.Context, out, stderr io.Writer, d db.DB, nodes []db.Node, hosts []string) (*nemesis.Cluster, map[string]error, error) {
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
		// The hosts may come from a stored file: whoever named them gets
		// no password unless the operator's known_hosts vouches for them.
		cfg.PasswordToVerifiedOnly = true
		// A container chaos left paused refuses commands: heal unpauses
		// it. A stopped one is reached, to be left out (skipStopped).
		dialer, err := control.NewDialer(hosts, cfg, control.DockerConfig{Unpause: true, Stopped: true})
		if err != nil {
			return nil, nil, usageErrorf("%v", err)
		}
		printHosts(out, nodes, hosts, o.sshPort)
		var wg sync.WaitGroup
		for i, h := range hosts {
			wg.Go(func() {
				remotes[i], errs[i] = dialer.Dial(ctx, h)
				if a, ok := remotes[i].(control.Addressed); ok {
					nodes[i].Addr = a.Addr()
				}
			})
		}
		wg.Wait()
	}
	skipStopped(ctx, remotes, errs)
	c, outcome := reached(d, nodes, remotes, errs)
	return c, outcome, nil
}

// layout is where the nodes keep their data, as --data-dir (or local
// mode) says, and where the fault proxy keeps its files.
func (o healOptions) layout(local bool) (db.Layout, error) {
	layout := db.DefaultLayout()
	switch {
	case o.dataDir != "":
		layout.DataDir = o.dataDir
	case local:
		// The local directory is refused as a run refuses it: another
		// user may have made it and planted pidfiles in it.
		if _, err := cluster.PrepareLocalDataDir(); err != nil {
			return layout, setupError(err)
		}
		layout = cluster.LocalLayout()
	}
	return layout, nil
}

// newDB is the system under test on nodes, keeping its files in layout.
func (o healOptions) newDB(nodes []db.Node, layout db.Layout) (db.DB, error) {
	d, err := cluster.Open(o.db, db.Config{Nodes: nodes, Layout: layout})
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if o.containerNodes() {
		d = db.ContainerNodes(d)
	}
	return d, nil
}

// reached is the cluster of the nodes whose host was reached, with the system under test
// d and its capabilities (its hooks), and the dial error of every other node.
func reached(d db.DB, nodes []db.Node, remotes []control.Remote, errs []error) (*nemesis.Cluster, map[string]error) {
	var up []db.Node
	byName := map[string]control.Remote{}
	outcome := map[string]error{}
	for i, n := range nodes {
		if errors.Is(errs[i], errStoppedContainer) {
			outcome[n.Name] = nil // stays down, as a killed node does
			continue
		}
		if errs[i] != nil {
			outcome[n.Name] = errs[i]
			continue
		}
		up = append(up, n)
		byName[n.Name] = remotes[i]
	}
	return nemesis.NewCluster(d, up, byName, false), outcome
}

// printHeal writes a line per node, in order: "healed" on stdout, or why
// not on stderr. It returns the exit error (255) when some node failed.
func printHeal(out, errOut io.Writer, nodes []db.Node, outcome map[string]error) error {
	failed := 0
	for _, n := range nodes {
		if err := outcome[n.Name]; err != nil {
			failed++
			fmt.Fprintf(errOut, "chaos: heal %s (%s): %s\n", n.Name, n.Addr, termsafe.Escape(strings.ReplaceAll(err.Error(), "\n", "; ")))
			continue
		}
		fmt.Fprintf(out, "%s (%s): healed\n", n.Name, n.Addr)
	}
	if failed > 0 {
		return setupError(fmt.Errorf("heal failed on %d of %d hosts", failed, len(nodes)))
	}
	return nil
}

// errStoppedContainer marks a container that is stopped: nothing of
// chaos's is in force in it (its rules went with its network namespace,
// its fault file system with its mount namespace), and heal leaves it down
// as it leaves killed nodes.
var errStoppedContainer = errors.New("stopped")

// skipStopped marks the reached containers that are stopped, so that heal
// leaves them out (see reached).
func skipStopped(ctx context.Context, remotes []control.Remote, errs []error) {
	for i, r := range remotes {
		if errs[i] != nil || r == nil {
			continue
		}
		if ct, ok := control.ContainerOf(r); ok {
			if state, _, err := ct.Inspect(ctx); err == nil && (state == "exited" || state == "created") {
				errs[i] = errStoppedContainer
			}
		}
	}
}
