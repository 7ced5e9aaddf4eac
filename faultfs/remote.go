package faultfs

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"chaos/control"
)

// Host is the fault file system of one host as the controller drives it,
// through a control.Remote: by running the chaos binary at Path there,
// which talks to the file system's control socket Socket.
type Host struct {
	Path   string
	Socket string
	// Names is the names model the file system serves with ("" is
	// NamesPOSIX).
	Names Names
	// UndoMemoryMiB bounds the old bytes the file system keeps in memory,
	// in MiB (0: its default, DefaultUndoMemory).
	UndoMemoryMiB int64
}

// ServeArgv is the command line that serves backing at mount on the host
// (to be started and supervised as a daemon, as the fault proxy is).
func (h Host) ServeArgv(backing, mount string) []string {
	argv := []string{h.Path, "faultfs", "serve", "--backing", backing, "--mount", mount, "--control", h.Socket}
	if h.Names != "" && h.Names != NamesPOSIX {
		argv = append(argv, "--names", string(h.Names))
	}
	if h.UndoMemoryMiB != 0 {
		argv = append(argv, "--undo-memory-mib", strconv.FormatInt(h.UndoMemoryMiB, 10))
	}
	return argv
}

// PowerLoss drops all that is not durable on r's host (the node that uses
// the mount must be dead), and says what that was.
func (h Host) PowerLoss(ctx context.Context, r control.Remote) (PowerLossResult, error) {
	var out PowerLossResult
	return out, h.run(ctx, r, &out, "power-loss")
}

// SetErrors injects errors on r's host as req says.
func (h Host) SetErrors(ctx context.Context, r control.Remote, req ErrorsRequest) (Status, error) {
	var out Status
	return out, h.run(ctx, r, &out, "errors", "--kind", req.Kind, "--on", req.On,
		"--for", strconv.FormatInt(req.ForMS, 10)+"ms")
}

// ClearErrors ends error injection on r's host.
func (h Host) ClearErrors(ctx context.Context, r control.Remote) (Status, error) {
	var out Status
	return out, h.run(ctx, r, &out, "clear")
}

// Status is what is not durable on r's host.
func (h Host) Status(ctx context.Context, r control.Remote) (Status, error) {
	var out Status
	return out, h.run(ctx, r, &out, "status")
}

// run runs `chaos faultfs VERB --control SOCKET ARGS...` on r's host and
// decodes the line it prints into out.
func (h Host) run(ctx context.Context, r control.Remote, out any, verb string, args ...string) error {
	words := []string{control.ShellQuote(h.Path), "faultfs", verb, "--control", control.ShellQuote(h.Socket)}
	for _, a := range args {
		words = append(words, control.ShellQuote(a))
	}
	b, err := control.Output(ctx, r, strings.Join(words, " "))
	if err != nil {
		return fmt.Errorf("faultfs %s: %w", verb, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("faultfs %s on %s: unexpected answer %q", verb, r.Host(), strings.TrimSpace(string(b)))
	}
	return nil
}
