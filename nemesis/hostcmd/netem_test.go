package hostcmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNetemRouteDev(t *testing.T) {
	assert.Equal(t, "eth0", netemRouteDev("10.77.0.12 dev eth0 src 10.77.0.11 uid 0 \\    cache"))
	assert.Equal(t, "lo", netemRouteDev("local 127.0.0.12 dev lo table local src 127.0.0.1 uid 0"))
}

func TestNetemHealDeletesOnlyChaosRoots(t *testing.T) {
	show := "qdisc noqueue 0: dev lo root refcnt 2\n" +
		"qdisc htb c4a5: dev eth0 root refcnt 2 r2q 10 default 0\n" +
		"qdisc netem c501: dev eth0 parent c4a5:1 limit 10000 delay 20ms\n" +
		"qdisc htb 1: dev eth1 root refcnt 2 r2q 10 default 0\n" +
		"qdisc netem c4a5: dev eth1 parent 1:1 limit 1000\n" +
		"qdisc htb c4a5: dev veth0 root refcnt 2\n"
	cmds, err := netemHealCmds(show)
	require.NoError(t, err)
	assert.Equal(t, []string{"tc qdisc del dev eth0 root handle c4a5:", "tc qdisc del dev veth0 root handle c4a5:"}, cmds)
}
