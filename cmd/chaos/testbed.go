package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"chaos/testbed"
)

// testbedOptions are the flags of `chaos testbed up|down|status`.
type testbedOptions struct {
	dir          string
	hosts        int
	subnet       string
	installDeps  bool
	readyTimeout time.Duration
	docker       bool   // containers instead of network namespaces
	image        string // --docker: the containers' image
}

func newTestbedCmd() *cobra.Command {
	var o testbedOptions
	cmd := &cobra.Command{
		Use:   "testbed",
		Short: "Local hosts in Linux network namespaces, each with sshd (needs root)",
		Long: `testbed makes hosts n1..nN on this machine for chaos to test over SSH:
each is a network namespace on a bridge with its own address, hostname, PID
namespace and private /opt/chaos, /var/lib/chaos and /tmp, running sshd.

  chaos testbed up --hosts 5
  chaos run --nodes-file testbed/nodes --ssh-private-key testbed/id_ed25519 \
    --known-hosts testbed/known_hosts
  chaos testbed down`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageErrorf("chaos testbed needs a subcommand: up, down or status")
		},
	}
	cmd.PersistentFlags().StringVar(&o.dir, "dir", "testbed", "directory of the testbed's inventory and state")
	cmd.AddCommand(newTestbedUpCmd(&o), newTestbedDownCmd(&o), newTestbedStatusCmd(&o))
	return cmd
}

func newTestbedUpCmd(o *testbedOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Make the hosts and write the inventory (nodes, id_ed25519, known_hosts) into --dir",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTestbedUp(cmd, *o)
		},
	}
	cmd.Flags().IntVar(&o.hosts, "hosts", 5, fmt.Sprintf("number of hosts, 1 to %d", testbed.MaxHosts))
	cmd.Flags().StringVar(&o.subnet, "subnet", testbed.DefaultSubnet, "IPv4 network of the hosts; the bridge takes .1, hosts .11 and up")
	cmd.Flags().BoolVar(&o.installDeps, "install-deps", false, "install missing packages with apt-get")
	cmd.Flags().DurationVar(&o.readyTimeout, "ready-timeout", testbed.DefaultReadyTimeout, "bound on the wait for every sshd to answer")
	cmd.Flags().BoolVar(&o.docker, "docker", false, "Docker containers instead of network namespaces (no SSH; nodes file of docker:NAME hosts)")
	cmd.Flags().StringVar(&o.image, "image", "", "with --docker: the containers' image (default: one built offline from local files, removed by down)")
	return cmd
}

func newTestbedDownCmd(o *testbedOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Remove everything `testbed up` made, and nothing else",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTestbedDown(cmd, *o)
		},
	}
}

func newTestbedStatusCmd(o *testbedOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the hosts; exit 255 unless every one runs and answers SSH",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTestbedStatus(cmd, *o)
		},
	}
}

func runTestbedUp(cmd *cobra.Command, o testbedOptions) error {
	if o.docker {
		return runDockerTestbedUp(cmd, o)
	}
	if o.image != "" {
		return usageErrorf("--image needs --docker")
	}
	cfg := testbed.Config{Dir: o.dir, Hosts: o.hosts, Subnet: o.subnet, ReadyTimeout: o.readyTimeout}
	if _, err := cfg.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	if err := needRoot("up"); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sys := testbed.NewSystem()
	if err := ensureRequirements(ctx, cmd.ErrOrStderr(), sys, o.installDeps); err != nil {
		return err
	}
	st, err := testbed.Up(ctx, sys, cfg)
	if err != nil {
		return testbedError(err)
	}
	_, statuses, err := testbed.Status(ctx, sys, o.dir)
	if err != nil {
		return setupError(err)
	}
	out := cmd.OutOrStdout()
	printTestbed(out, o.dir, st, statuses)
	fmt.Fprintf(out, "\nrun a test on it with:\n  chaos run --nodes-file %s --ssh-private-key %s --known-hosts %s\n",
		filepath.Join(o.dir, testbed.NodesFile), filepath.Join(o.dir, testbed.KeyFile), filepath.Join(o.dir, testbed.KnownHostsFile))
	return nil
}

func runTestbedDown(cmd *cobra.Command, o testbedOptions) error {
	if done, err := downDockerTestbed(cmd, o); done {
		return err
	}
	out := cmd.OutOrStdout()
	if _, err := testbed.LoadState(o.dir); errors.Is(err, testbed.ErrNotUp) {
		fmt.Fprintf(out, "no testbed in %s: nothing to remove\n", o.dir)
		return nil
	}
	if err := needRoot("down"); err != nil {
		return err
	}
	// No signal handling: an interrupt ends the process, and the state file
	// lets a second down finish the job.
	st, err := testbed.Down(cmd.Context(), testbed.NewSystem(), o.dir)
	if err != nil {
		return setupError(fmt.Errorf("testbed down: %w (the state file stays: run down again)", err))
	}
	fmt.Fprintf(out, "removed the testbed in %s: %d hosts, bridge %s\n", o.dir, len(st.Hosts), st.Bridge)
	return nil
}

func runTestbedStatus(cmd *cobra.Command, o testbedOptions) error {
	if done, err := dockerTestbedStatus(cmd, o); done {
		return err
	}
	if err := testbed.Platform(); err != nil {
		return setupError(err)
	}
	st, statuses, err := testbed.Status(cmd.Context(), testbed.NewSystem(), o.dir)
	if errors.Is(err, testbed.ErrNotUp) {
		return setupError(fmt.Errorf("%w: start one with `chaos testbed up --dir %s`", err, o.dir))
	}
	if err != nil {
		return setupError(err)
	}
	printTestbed(cmd.OutOrStdout(), o.dir, st, statuses)
	for _, s := range statuses {
		if !s.Healthy() {
			return setupError(fmt.Errorf("testbed in %s is not fully up: %s does not run or answer SSH", o.dir, s.Name))
		}
	}
	return nil
}

// needRoot fails unless this is Linux and the process is root, which
// namespaces, the bridge and sshd need.
func needRoot(verb string) error {
	if err := testbed.Platform(); err != nil {
		return setupError(err)
	}
	if os.Geteuid() != 0 {
		return setupError(fmt.Errorf("chaos testbed %s needs root (network namespaces, a bridge, sshd): run it with sudo", verb))
	}
	return nil
}

// ensureRequirements fails with the install command when programs the
// testbed runs are missing, or installs them when install is set.
func ensureRequirements(ctx context.Context, log io.Writer, sys testbed.System, install bool) error {
	missing := testbed.Missing(sys)
	if len(missing) == 0 {
		return nil
	}
	if !install {
		return setupError(&testbed.MissingError{Missing: missing})
	}
	fmt.Fprintf(log, "chaos: installing %d missing packages with apt-get\n", len(missing))
	if err := testbed.Install(ctx, sys, missing); err != nil {
		return setupError(err)
	}
	if missing := testbed.Missing(sys); len(missing) > 0 {
		return setupError(fmt.Errorf("still missing after apt-get install: %w", &testbed.MissingError{Missing: missing}))
	}
	return nil
}

// testbedError classifies an error of Up: a bad configuration (254) or a
// setup failure (255).
func testbedError(err error) error {
	if errors.Is(err, testbed.ErrConfig) {
		return usageErrorf("%v", err)
	}
	return setupError(err)
}

// printTestbed writes where the testbed in dir keeps its inventory and a
// table of its hosts.
func printTestbed(w io.Writer, dir string, st testbed.State, statuses []testbed.HostStatus) {
	fmt.Fprintf(w, "testbed in %s: subnet %s, bridge %s\n", dir, st.Subnet, st.Bridge)
	fmt.Fprintf(w, "inventory: %s, %s, %s\n", filepath.Join(dir, testbed.NodesFile),
		filepath.Join(dir, testbed.KeyFile), filepath.Join(dir, testbed.KnownHostsFile))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tADDRESS\tNETNS\tPID\tRUNNING\tSSH")
	for _, s := range statuses {
		ssh := s.Banner
		if s.Err != nil {
			ssh = "unreachable: " + s.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, s.Addr, s.Netns, s.Pid, yesNo(s.Running), ssh)
	}
	tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
