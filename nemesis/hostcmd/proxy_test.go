package hostcmd

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProxyRulesCommands(t *testing.T) {
	from, to := netip.MustParseAddr("10.77.0.11"), netip.MustParseAddr("10.77.0.12")
	assert.Equal(t, []string{
		"iptables -w -t nat -A CHAOS-PROXY -s 10.77.0.11/32 -d 10.77.0.12/32 -p tcp --dport 2380 -m mark ! --mark 0xc4a5 -j REDIRECT --to-ports 40001",
		"iptables -w -t nat -A CHAOS-PROXY -s 10.77.0.11/32 -d 10.77.0.12/32 -p tcp --dport 2379 -m mark ! --mark 0xc4a5 -j REDIRECT --to-ports 40001",
	}, ProxyRedirectCmds(from, to, []uint16{2380, 2379}, 40001))
	assert.Equal(t, []string{
		"iptables -w -t nat -A CHAOS-PROXY -s 10.77.0.11/32 -d 10.77.0.12/32 -p tcp -m mark ! --mark 0xc4a5 -j REDIRECT --to-ports 40001",
	}, ProxyRedirectCmds(from, to, nil, 40001))
	assert.Equal(t, "ss -K -tn src 10.77.0.11 dst 10.77.0.12 '( dport = :2380 or dport = :2379 ) and fwmark != 0xc4a5/0xffffffff' >/dev/null",
		ProxyResetCmd(from, to, []uint16{2380, 2379}))
	assert.Equal(t, "ss -K -tn src 10.77.0.11 dst 10.77.0.12 'fwmark != 0xc4a5/0xffffffff' >/dev/null", ProxyResetCmd(from, to, nil))
}
