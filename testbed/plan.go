package testbed

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strconv"
)

// namePrefix starts every testbed's prefix; PrefixFor appends a hash.
const namePrefix = "ctb"

// testbedNetns matches the network namespace of a host of any testbed.
var testbedNetns = regexp.MustCompile(`^` + namePrefix + `[0-9a-f]{6}-n[0-9]+$`)

// PrefixFor is the prefix of every network object of the testbed in the
// absolute directory dir: "ctb" and six hex digits of the directory's hash.
// With the longest suffix, "-n50", names stay within the kernel's 15
// characters for an interface.
func PrefixFor(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return namePrefix + hex.EncodeToString(sum[:3])
}

// plan is the state of an n-host testbed before anything is made: names,
// addresses and paths, no pids.
func plan(prefix string, subnet netip.Prefix, n int) State {
	st := State{
		Prefix:     prefix,
		Subnet:     subnet.String(),
		Bridge:     prefix + "-br",
		BridgeAddr: netip.PrefixFrom(bridgeAddr(subnet), subnet.Bits()).String(),
	}
	for k := 1; k <= n; k++ {
		name := "n" + strconv.Itoa(k)
		st.Hosts = append(st.Hosts, Host{
			Name:       name,
			Addr:       hostAddr(subnet, k).String(),
			Netns:      prefix + "-" + name,
			Veth:       prefix + "-" + name,
			SSHDConfig: filepath.Join(hostDir(insideDir(prefix), name), sshdConfigFile),
		})
	}
	return st
}

// hostDir is where host name's files live in the testbed directory dir.
func hostDir(dir, name string) string {
	return filepath.Join(dir, hostsDir, name)
}

// insideDir is where the hosts see the testbed directory: a bind mount in
// their private /run, named after the testbed so a host's command line
// names its testbed. The hosts' sshds read their files there because the
// directory's own path may be hidden in a host (a testbed under /tmp is
// under the host's private /tmp).
func insideDir(prefix string) string {
	return "/run/" + prefix
}

// cidr is the host's address with the subnet's prefix length.
func (h Host) cidr(subnet string) (string, error) {
	p, err := netip.ParsePrefix(subnet)
	if err != nil {
		return "", fmt.Errorf("subnet %q in testbed state: %w", subnet, err)
	}
	a, err := netip.ParseAddr(h.Addr)
	if err != nil {
		return "", fmt.Errorf("address %q of %s in testbed state: %w", h.Addr, h.Name, err)
	}
	return netip.PrefixFrom(a, p.Bits()).String(), nil
}
