// Command chaos deploys Raft nodes, drives concurrent clients against them while
// injecting faults, records every operation and checks the history for
// linearizability. The same binary is the controller and the node (`chaos node`).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"chaos/internal/termsafe"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the command line and returns the process exit code of
// docs/FORMATS.md. It is the only place that maps errors to exit codes.
func run(args []string) int { return runWith(args, os.Stderr) }

// runWith is run with the error line written to stderr, escaped: an error
// may carry what a node, a remote shell or a file said.
func runWith(args []string, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	stderr = termsafe.NewWriter(stderr)
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "chaos:", ee.err)
		}
		return ee.code
	}
	// Errors cobra returns itself (unknown flag, bad value, wrong arg count)
	// are usage errors.
	fmt.Fprintln(stderr, "chaos:", err)
	return exitUsage
}
