package workload

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client command does not inherit the password chaos was given in its
// environment, so its stderr, which reaches the history's errors, cannot
// carry it.
func TestClientCommandHidesTheSecretEnvironment(t *testing.T) {
	t.Setenv("CHAOS_SSH_PASSWORD", "hunter2-in-env")
	t.Setenv("CHAOS_TEST_OTHER", "kept")
	p, err := startClientProcess("printenv CHAOS_SSH_PASSWORD >&2; printenv CHAOS_TEST_OTHER >&2; exit 3", t.TempDir())
	require.NoError(t, err)
	select {
	case <-drained(p.lines):
	case <-time.After(10 * time.Second):
		t.Fatal("the client command did not end")
	}
	p.stop()
	assert.NotContains(t, p.describe(), "hunter2-in-env")
	assert.Contains(t, p.describe(), "stderr ends: kept")
}

// drained is closed once lines is closed, every line read.
func drained(lines <-chan []byte) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range lines {
		}
		close(done)
	}()
	return done
}
