package testbed

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrefixForIsStableAndDiffersByDirectory(t *testing.T) {
	a := PrefixFor("/home/ann/testbed")
	assert.Equal(t, a, PrefixFor("/home/ann/testbed"))
	assert.NotEqual(t, a, PrefixFor("/home/bob/testbed"))
	assert.Regexp(t, `^ctb[0-9a-f]{6}$`, a)
	assert.LessOrEqual(t, len(a+"-n50"), 15, "the kernel's limit on interface names")
	assert.True(t, testbedNetns.MatchString(a+"-n50"))
	assert.False(t, testbedNetns.MatchString(a+"-br"))
}

func TestPlanNamesAndAddresses(t *testing.T) {
	st := plan("ctb0a0b0c", netip.MustParsePrefix("192.168.50.0/26"), 50)
	assert.Equal(t, "ctb0a0b0c-br", st.Bridge)
	assert.Equal(t, "192.168.50.1/26", st.BridgeAddr)
	assert.Equal(t, Host{Name: "n1", Addr: "192.168.50.11", Netns: "ctb0a0b0c-n1", Veth: "ctb0a0b0c-n1",
		SSHDConfig: "/run/ctb0a0b0c/hosts/n1/sshd_config"}, st.Hosts[0])
	assert.Equal(t, "192.168.50.60", st.Hosts[49].Addr)
}

func TestAncestry(t *testing.T) {
	assert.Equal(t, []string{"/var", "/var/lib", "/var/lib/chaos"}, ancestry("/var/lib/chaos"))
	assert.Equal(t, []string{"/tmp"}, ancestry("/tmp/"))
}

func TestProcessState(t *testing.T) {
	assert.Equal(t, byte('S'), processState([]byte("42 (sshd) S 1 42 42")))
	assert.Equal(t, byte('Z'), processState([]byte("42 (a) b) Z 1 42")), "a command name with a parenthesis")
	assert.Equal(t, byte(0), processState([]byte("42 (sshd")))
}
