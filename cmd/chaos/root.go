package main

import "github.com/spf13/cobra"

// newRootCmd builds the command tree. Each subcommand lives in its own file.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "chaos",
		Short: "Chaos testing and linearizability checking for Raft clusters",
		Long: `chaos deploys real Raft nodes to hosts, drives concurrent clients against
them while injecting faults, records every operation and proves or refutes
linearizability with Porcupine.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCmd())
	root.AddCommand(newNodeCmd())
	root.AddCommand(newRunCmd())
	root.AddCommand(newTestAllCmd())
	root.AddCommand(newCheckCmd())
	root.AddCommand(newTestbedCmd())
	root.AddCommand(newHealCmd())
	root.AddCommand(newLogsCmd())
	root.AddCommand(newServeCmd())
	root.AddCommand(newBenchCmd())
	root.AddCommand(newFaultProxyCmd())
	root.AddCommand(newVDSOClockCmd())
	root.AddCommand(newFaultFSCmd())
	root.AddCommand(newCorruptCmd())
	return root
}
