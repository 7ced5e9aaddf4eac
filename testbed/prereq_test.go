package testbed

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMissingRequirementsSayHowToInstallThem(t *testing.T) {
	fake := newFakeSystem()
	assert.Empty(t, Missing(fake))

	fake.missing["iptables"], fake.missing["sshd"] = true, true
	missing := Missing(fake)
	assert.Equal(t, []Requirement{{"sshd", "openssh-server"}, {"iptables", "iptables"}}, missing)
	assert.EqualError(t, &MissingError{Missing: missing},
		"the testbed needs sshd (package openssh-server), iptables (package iptables): "+
			"install with `apt-get install -y openssh-server iptables`, or give --install-deps")
}

func TestInstallRunsAptGet(t *testing.T) {
	fake := newFakeSystem()
	require.NoError(t, Install(context.Background(), fake, []Requirement{{"ip", "iproute2"}, {"sshd", "openssh-server"}}))
	assert.Equal(t, []string{
		"run apt-get update",
		"run env DEBIAN_FRONTEND=noninteractive apt-get install -y iproute2 openssh-server",
	}, fake.calls)

	fake.failOn = "apt-get update"
	err := Install(context.Background(), fake, []Requirement{{"ip", "iproute2"}})
	assert.ErrorContains(t, err, "install testbed requirements: apt-get update")
}

func TestUpNeedsSSHD(t *testing.T) {
	fake := newFakeSystem()
	fake.missing["sshd"] = true
	_, err := Up(context.Background(), fake, Config{Dir: t.TempDir(), Hosts: 1})
	var missing *MissingError
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, []Requirement{{"sshd", "openssh-server"}}, missing.Missing)
	assert.Empty(t, fake.calls)
}
