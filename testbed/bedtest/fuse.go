package bedtest

import (
	"os"
	"testing"
)

// RequireFUSE stops the test unless this process can mount a FUSE file
// system directly (root, and /dev/fuse to open), as the fault file
// system's tests do: with t.Fatalf when the environment has CI=true, with
// t.Skip elsewhere. Unlike Require it needs no testbed, and SkipEnv does
// not turn it off: the race detector pass runs these tests too.
func RequireFUSE(t testing.TB) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "mounting FUSE directly needs root"
	} else if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil {
		why = "cannot open /dev/fuse: " + err.Error()
	} else {
		_ = f.Close()
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("FUSE test cannot run: %s", why)
	}
	t.Skip(why)
}
