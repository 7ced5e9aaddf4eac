package main

import "fmt"

// Exit codes of every command (docs/FORMATS.md).
const (
	exitOK      = 0   // valid / success
	exitInvalid = 1   // an anomaly was found
	exitUnknown = 2   // a checker timed out or could not decide
	exitUsage   = 254 // bad arguments or configuration
	exitSetup   = 255 // setup failure or crash
)

// exitError carries the exit code a command wants. A nil err exits silently
// with code (used for verdicts that were already printed).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports bad arguments or configuration (exit 254).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// setupError reports a setup failure (exit 255).
func setupError(err error) error {
	return &exitError{code: exitSetup, err: err}
}
