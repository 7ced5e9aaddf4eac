package bedtest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// netnsChildEnv marks the copy of a test binary that InOwnNetNS started
// inside a network namespace of its own.
const netnsChildEnv = "CHAOS_BEDTEST_NETNS_CHILD"

// InOwnNetNS runs the calling test again in a copy of the test binary
// inside a network namespace of its own (unshare --net), where the
// iptables rules and addresses the test makes die with the namespace and
// nothing of the machine's is touched. In that copy it returns true: the
// test goes on with its body. In the test itself it waits for the copy,
// logs its output, fails the test when the copy failed, and returns
// false: the test returns at once. Its prerequisites (root, iptables,
// unshare, ip) are those of Require, with the same skip or failure.
func InOwnNetNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsChildEnv) != "" {
		return true
	}
	Require(t, "iptables", "unshare", "ip")
	cmd := exec.Command("unshare", "--net", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), netnsChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in the namespace:\n%s", out)
	require.NoError(t, err)
	return false
}
