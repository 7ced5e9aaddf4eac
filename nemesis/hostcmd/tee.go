package hostcmd

import (
	"fmt"
	"net/netip"
	"strconv"
)

// teeChainName is the mangle chain of the duplication rules.
const teeChainName = "CHAOS-TEE"

// TeeChain is the duplication's chain (teeChainName), jumped to from
// mangle's POSTROUTING: after NAT, so a connection the fault proxy takes
// over is duplicated on the proxy's way to the peer, never on the host's
// loopback.
func TeeChain() Chain { return Chain{Table: "mangle", From: "POSTROUTING", Name: teeChainName} }

// TeeCmd duplicates, in the TEE chain, each packet from `from` to `to`
// with probability p: iptables' TEE target clones it and sends the clone
// to `to` as its gateway, so the peer receives it twice, on the wire.
func TeeCmd(from, to netip.Addr, p float64) string {
	return fmt.Sprintf("iptables -w -t mangle -A %s -s %s/32 -d %s/32 -m statistic --mode random --probability %s -j TEE --gateway %s",
		teeChainName, from, to, strconv.FormatFloat(p, 'f', -1, 64), to)
}
