package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

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
