package bedtest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns the path of a headless-capable Chromium for the tests
// that render pages in a browser (test.sh installs Debian's chromium).
// Without one the test stops with the command that installs it: t.Fatal
// under CI=true (a CI machine must run these tests), t.Skip elsewhere.
// Tests that start it run under the shared end-to-end lock.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is missing: apt-get install -y chromium (test.sh does)")
	}
	t.Skip("chromium is missing: apt-get install -y chromium")
	return ""
}
