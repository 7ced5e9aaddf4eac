package db

import (
	"context"
	"os"
	"strings"
	"sync"

	"chaos/control"
)

// recorder is a fake Remote that records every command and transfer and
// answers with canned exit codes.
type recorder struct {
	host string
	mu   sync.Mutex
	log  []string
	// exit maps a substring of a command to the exit code it gets.
	exit map[string]int
}

func (r *recorder) Host() string { return r.host }
func (r *recorder) Close() error { return nil }

func (r *recorder) Run(_ context.Context, cmd string) (control.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, "run "+cmd)
	for sub, code := range r.exit {
		if strings.Contains(cmd, sub) {
			return control.Result{ExitCode: code, Stderr: []byte("canned failure")}, nil
		}
	}
	return control.Result{}, nil
}

func (r *recorder) Upload(_ context.Context, local, remote string, mode os.FileMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, "upload "+local+" -> "+remote+" "+mode.String())
	return nil
}

func (r *recorder) Download(_ context.Context, remote, local string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, "download "+remote)
	return os.WriteFile(local, []byte("log of "+remote), 0o644)
}

func (r *recorder) transcript() string { return strings.Join(r.log, "\n") + "\n" }
