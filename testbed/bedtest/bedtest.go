// Package bedtest holds what the end-to-end tests of other packages share:
// the check that this machine can host a testbed, a testbed that is torn
// down when the test ends, a chaos binary to deploy on its hosts, and the
// Chromium that renders pages. Like net/http/httptest it is meant for tests
// only: import it from _test.go files, never from the product.
package bedtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"chaos/testbed"
)

// SkipEnv names the environment variable that turns the testbed
// end-to-end tests off on purpose: with SkipEnv=skip, Require skips, under
// CI=true too. test.sh sets it for its race detector pass, which runs the
// concurrent packages' tests again, all but these (they ran in the pass
// before, one package at a time). Any other non-empty value is a mistake,
// and fails the test.
const SkipEnv = "CHAOS_TESTBED_E2E"

// Require returns this machine's testbed.System when it can host a testbed:
// the process is root, testbed.Platform and testbed.Missing find nothing
// lacking, and every one of tools is on PATH. Otherwise the test stops with
// a one-line reason: t.Fatalf when the environment has CI=true (a CI
// machine is expected to run every end-to-end test), t.Skip elsewhere.
// Under -short, and with SkipEnv=skip, it always skips.
func Require(t testing.TB, tools ...string) testbed.System {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test on a testbed")
	}
	switch v := os.Getenv(SkipEnv); v {
	case "":
	case "skip":
		t.Skip("end-to-end test on a testbed: turned off by " + SkipEnv + "=skip")
	default:
		t.Fatalf("%s=%q: want skip, or no value to run the test", SkipEnv, v)
	}
	sys := testbed.NewSystem()
	if why := unmet(sys, tools); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testbed end-to-end test cannot run: %s", why)
		}
		t.Skip(why)
	}
	return sys
}

// unmet says what this machine lacks to host a testbed with tools, or "".
func unmet(sys testbed.System, tools []string) string {
	if os.Geteuid() != 0 {
		return "needs root"
	}
	if err := testbed.Platform(); err != nil {
		return err.Error()
	}
	if m := testbed.Missing(sys); len(m) > 0 {
		return (&testbed.MissingError{Missing: m}).Error()
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return "needs " + tool + " on PATH"
		}
	}
	return ""
}

// Up brings up the testbed cfg describes (testbed.Up rolls back a failed
// one itself), failing the test if that fails, and downs it when the test
// ends. It waits (while ctx allows) for another test that has a testbed
// on the same subnet up, in this process or another, to end first (see
// lockSubnet). A test may Down the testbed itself, to check the teardown: the Down
// at the end then finds nothing to do.
func Up(ctx context.Context, t testing.TB, sys testbed.System, cfg testbed.Config) testbed.State {
	t.Helper()
	if err := lockSubnet(ctx, t, cfg.Subnet); err != nil {
		t.Fatalf("testbed up: %v", err)
	}
	st, err := testbed.Up(ctx, sys, cfg)
	if err != nil {
		t.Fatalf("testbed up: %v", err)
	}
	t.Cleanup(func() { _, _ = testbed.Down(context.Background(), sys, cfg.Dir) })
	return st
}

// BuildChaos builds chaos/cmd/chaos into a directory of t's own (removed
// when the test ends) and returns the binary's path; a failed build fails
// the test. Every call builds anew; the Go build cache makes the calls after
// the first cheap.
func BuildChaos(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chaos")
	if out, err := exec.Command("go", "build", "-o", bin, "chaos/cmd/chaos").CombinedOutput(); err != nil {
		t.Fatalf("go build chaos/cmd/chaos: %v\n%s", err, out)
	}
	return bin
}
