package hostcmd

import (
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Linux's rules for interface names (dev_valid_name), and control
// characters besides.
func TestCheckIfName(t *testing.T) {
	for _, ok := range []string{"eth0", "lo", "enp0s31f6", "veth-c4a5.12", "br_0@x", "a23456789012345", "we'ird$;|x"} {
		assert.NoError(t, checkIfName(ok), ok)
	}
	for name, why := range map[string]string{
		"":                 `interface name "": empty`,
		"a234567890123456": `interface name "a234567890123456": 16 bytes, more than Linux's 15`,
		".":                `interface name ".": not a name Linux allows`,
		"..":               `interface name "..": not a name Linux allows`,
		"eth0/1":           `interface name "eth0/1": holds '/' or ':', which Linux refuses in interface names`,
		"eth0:1":           `interface name "eth0:1": holds '/' or ':', which Linux refuses in interface names`,
		"eth 0":            `interface name "eth 0": holds whitespace or a control character`,
		"eth\t0":           `interface name "eth\t0": holds whitespace or a control character`,
		"eth0\n":           `interface name "eth0\n": holds whitespace or a control character`,
		"e\x1b[2J":         `interface name "e\x1b[2J": holds whitespace or a control character`,
		"eth\u00a00":       `interface name "eth\u00a00": holds whitespace or a control character`,
	} {
		assert.EqualError(t, checkIfName(name), why, "%q", name)
	}
}

// tc commands given a name the kernel allows but a shell does not take
// as one word get it as one word, unchanged: run through sh with tc
// standing for a function that prints its arguments.
func TestNetemCommandsQuoteTheInterfaceName(t *testing.T) {
	const dev = `we'ird$x;|`
	require.NoError(t, checkIfName(dev))
	heal, err := netemHealCmds("qdisc htb c4a5: dev " + dev + " root refcnt 2\n")
	require.NoError(t, err)
	cmds := append(NetemSenderCmds(dev, 1, netip.MustParseAddr("10.0.0.1"), []netip.Addr{netip.MustParseAddr("10.0.0.2")}, 0, "delay 5ms"), heal...)
	for _, cmd := range cmds {
		// The root command's first tc "fails", so that its fallback runs.
		script := `tc() { for a in "$@"; do printf '<%s>' "$a"; done; echo; [ "$1" != qdisc ] || [ "$2" != add ] || [ "$5" != root ] || return 1; }; grep() { return 1; }; ` + cmd
		out, err := exec.Command("sh", "-c", script).CombinedOutput()
		if strings.HasPrefix(cmd, "tc qdisc add dev") && strings.Contains(cmd, " root ") {
			require.Error(t, err, "the root command fails when the root is not chaos's")
			assert.Contains(t, string(out), "cannot add the chaos root qdisc on "+dev+": the root qdisc there belongs to the host")
		} else {
			require.NoError(t, err, "%s\n%s", cmd, out)
		}
		assert.Contains(t, string(out), "<dev><"+dev+">", cmd)
	}
}

// Only well-formed names of chaos's roots reach a heal command.
func TestNetemHealRefusesABadInterfaceName(t *testing.T) {
	_, err := netemHealCmds("qdisc htb c4a5: dev a234567890123456 root refcnt 2\n")
	require.EqualError(t, err, `tc qdisc show: interface name "a234567890123456": 16 bytes, more than Linux's 15`)
}
