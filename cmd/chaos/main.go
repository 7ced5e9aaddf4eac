// Command chaos deploys Raft nodes, drives concurrent clients against them while
// injecting faults, records every operation and checks the history for
// linearizability. The same binary is the controller and the node (`chaos node`).
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the command line and returns the process exit code of
// docs/FORMATS.md. It is the only place that maps errors to exit codes.
func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", ee.err)
		}
		return ee.code
	}
	// Errors cobra returns itself (unknown flag, bad value, wrong arg count)
	// are usage errors.
	fmt.Fprintln(os.Stderr, "chaos:", err)
	return exitUsage
}
