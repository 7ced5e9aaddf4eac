package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"chaos/testbed"
	"chaos/testbed/dockerbed"
)

// runDockerTestbedUp is `chaos testbed up --docker`: containers instead of
// network namespaces.
func runDockerTestbedUp(cmd *cobra.Command, o testbedOptions) error {
	if o.hosts < 1 || o.hosts > dockerbed.MaxHosts {
		return usageErrorf("--hosts %d: want 1 to %d", o.hosts, dockerbed.MaxHosts)
	}
	if cmd.Flags().Changed("subnet") {
		return usageErrorf("--subnet is for network namespaces; with --docker, Docker picks the network's subnet")
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := dockerbed.Up(ctx, dockerbed.NewEngine(), dockerbed.Config{Dir: o.dir, Hosts: o.hosts, Image: o.image})
	if err != nil {
		return setupError(fmt.Errorf("testbed up --docker: %w", err))
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "docker testbed in %s: %d containers on network %s, image %s\n", o.dir, len(st.Containers), st.Network, st.Image)
	for _, c := range st.Containers {
		fmt.Fprintf(out, "  docker:%s\n", c)
	}
	fmt.Fprintf(out, "\nrun a test on it with:\n  chaos run --nodes-file %s\n", filepath.Join(o.dir, testbed.NodesFile))
	return nil
}

// downDockerTestbed removes the docker testbed in o.dir; done is false
// when there is none (the directory may hold a namespace testbed).
func downDockerTestbed(cmd *cobra.Command, o testbedOptions) (done bool, err error) {
	st, err := dockerbed.Down(cmd.Context(), dockerbed.NewEngine(), o.dir)
	if errors.Is(err, testbed.ErrNotUp) {
		return false, nil
	}
	if err != nil {
		return true, setupError(fmt.Errorf("testbed down: %w (the state file stays: run down again)", err))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "removed the docker testbed in %s: %d containers, network %s%s\n",
		o.dir, len(st.Containers), st.Network, map[bool]string{true: ", image " + st.Image}[st.BuiltImage])
	return true, nil
}

// dockerTestbedStatus shows the docker testbed in o.dir, each container
// and its state; done is false when there is none. It is a setup failure
// (255) unless every container runs.
func dockerTestbedStatus(cmd *cobra.Command, o testbedOptions) (done bool, err error) {
	st, err := dockerbed.LoadState(o.dir)
	if errors.Is(err, testbed.ErrNotUp) {
		return false, nil
	}
	if err != nil {
		return true, setupError(err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "docker testbed in %s: network %s, image %s\n", o.dir, st.Network, st.Image)
	states, err := dockerbed.States(cmd.Context(), dockerbed.NewEngine(), st)
	if err != nil {
		return true, setupError(err)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tCONTAINER\tSTATE")
	down := ""
	for i, c := range st.Containers {
		fmt.Fprintf(tw, "n%d\t%s\t%s\n", i+1, c, states[c])
		if states[c] != "running" && down == "" {
			down = c
		}
	}
	tw.Flush()
	if down != "" {
		return true, setupError(fmt.Errorf("docker testbed in %s is not fully up: %s is %s", o.dir, down, cmp.Or(states[down], "missing")))
	}
	return true, nil
}
