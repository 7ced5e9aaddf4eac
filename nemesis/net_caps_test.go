package nemesis

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
)

func TestParseNetProbe(t *testing.T) {
	caps, err := parseNetProbe(netProbeNoNetem)
	require.NoError(t, err)
	assert.NoError(t, caps.IPTables)
	assert.NoError(t, caps.Statistic)
	assert.NoError(t, caps.HTB)
	assert.NoError(t, caps.U32)
	assert.EqualError(t, caps.Netem, "netem: exit 2: Error: Specified qdisc kind is unknown.")
	assert.NoError(t, caps.Redirect)
	assert.NoError(t, caps.TEE)
	assert.NoError(t, caps.SS)

	caps, err = parseNetProbe(netProbeNotRoot)
	require.NoError(t, err)
	assert.EqualError(t, caps.Redirect, "redirect: exit 1: unshare: unshare failed: Operation not permitted")

	caps, err = parseNetProbe("iptables ok\n")
	require.NoError(t, err)
	assert.EqualError(t, caps.Netem, "netem: not probed")

	_, err = parseNetProbe("iptables ok\nsh: 1: syntax error\n")
	assert.EqualError(t, err, `probe network fault support: unexpected output line "sh: 1: syntax error"`)
}

// The probe runs on this machine as it would on a host, finds what the
// kernel has, and leaves the rules and qdiscs as they were, also when it
// is killed half way.
func TestProbeNetOnThisMachineLeavesNothingBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs iptables and tc")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, tool := range []string{"iptables", "tc", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	state := func() string {
		var ipt []byte
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command("iptables", "-w", "-t", table, "-S").CombinedOutput()
			require.NoError(t, err, string(out))
			ipt = append(ipt, out...)
		}
		tc, err := exec.Command("tc", "qdisc", "show").CombinedOutput()
		require.NoError(t, err, string(tc))
		return string(ipt) + string(tc)
	}
	before := state()
	r := control.NewLocal("local")
	caps, err := ProbeNet(context.Background(), r)
	require.NoError(t, err)
	require.NoError(t, caps.IPTables, "root can list rules")
	require.Equal(t, before, state())

	for _, d := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		_, _ = ProbeNet(ctx, r)
		cancel()
		require.Equal(t, before, state(), "a probe killed after %v", d)
	}
}
