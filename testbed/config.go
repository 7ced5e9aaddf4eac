package testbed

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// Limits and defaults of a testbed.
const (
	// DefaultSubnet is the IPv4 network of the bridge and the hosts.
	DefaultSubnet = "10.77.0.0/24"
	// MaxHosts bounds --hosts: enough for any Raft cluster, few enough that
	// one machine runs them all.
	MaxHosts = 50
	// DefaultReadyTimeout bounds how long Up waits for every sshd to answer.
	DefaultReadyTimeout = 30 * time.Second

	// hostOffset places host k at the subnet's address hostOffset+k; the
	// bridge takes the first address (offset 1).
	hostOffset = 10
)

// ErrConfig marks errors in what the caller asked for, as opposed to the
// machine failing: a bad host count or subnet, a subnet already in use, a
// testbed already up in the directory.
var ErrConfig = errors.New("testbed configuration")

// Config says what testbed Up makes.
type Config struct {
	// Dir is where the inventory and the state go (D in the package doc).
	Dir string
	// Hosts is the number of hosts, 1..MaxHosts.
	Hosts int
	// Subnet is the IPv4 network of the bridge and hosts in CIDR form, given
	// by its network address (10.77.0.0/24, not 10.77.0.5/24). Empty means
	// DefaultSubnet.
	Subnet string
	// ReadyTimeout bounds the wait for every sshd to answer; 0 means
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Rand is the source of the SSH keys; nil means crypto/rand. Tests pass
	// a fixed stream to get the same keys on every run.
	Rand io.Reader
}

// Validate checks the configuration without touching the machine and returns
// the subnet. Its errors wrap ErrConfig.
func (c Config) Validate() (netip.Prefix, error) {
	if c.Dir == "" {
		return netip.Prefix{}, configErrorf("no testbed directory given")
	}
	if c.Hosts < 1 || c.Hosts > MaxHosts {
		return netip.Prefix{}, configErrorf("--hosts %d: want 1 to %d", c.Hosts, MaxHosts)
	}
	if c.ReadyTimeout < 0 {
		return netip.Prefix{}, configErrorf("ready timeout %v is negative", c.ReadyTimeout)
	}
	return parseSubnet(c.subnet(), c.Hosts)
}

func (c Config) subnet() string {
	if c.Subnet == "" {
		return DefaultSubnet
	}
	return c.Subnet
}

func (c Config) readyTimeout() time.Duration {
	if c.ReadyTimeout == 0 {
		return DefaultReadyTimeout
	}
	return c.ReadyTimeout
}

// parseSubnet parses s and checks it is an IPv4 network with room for the
// bridge and hosts addresses below its broadcast address.
func parseSubnet(s string, hosts int) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, configErrorf("--subnet %q: want an IPv4 network such as %s", s, DefaultSubnet)
	}
	if p != p.Masked() {
		return netip.Prefix{}, configErrorf("--subnet %s: give the network address, %s", s, p.Masked())
	}
	last := hostAddr(p, hosts)
	if !p.Contains(last) || !p.Contains(last.Next()) {
		return netip.Prefix{}, configErrorf("--subnet %s is too small for %d hosts (they take offsets %d..%d): use a /%d or larger",
			s, hosts, hostOffset+1, hostOffset+hosts, largestPrefixLen(hostOffset+hosts+2))
	}
	return p, nil
}

// bridgeAddr is the address of the bridge, the machine's side of the subnet.
func bridgeAddr(subnet netip.Prefix) netip.Addr {
	return subnet.Addr().Next()
}

// hostAddr is the address of host k (1-based).
func hostAddr(subnet netip.Prefix, k int) netip.Addr {
	a := subnet.Addr()
	for range hostOffset + k {
		a = a.Next()
	}
	return a
}

// largestPrefixLen is the longest IPv4 prefix length whose network holds n
// addresses.
func largestPrefixLen(n int) int {
	bits := 0
	for 1<<bits < n {
		bits++
	}
	return 32 - bits
}

// configError is an error in the configuration; errors.Is matches it to
// ErrConfig.
type configError struct{ msg string }

func (e *configError) Error() string        { return e.msg }
func (e *configError) Is(target error) bool { return target == ErrConfig }

func configErrorf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}
