package hostcmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChainLeft(t *testing.T) {
	rules := "-P INPUT ACCEPT\n-N CHAOS-PARTITION\n-N CHAOS-TARGET\n-A INPUT -j CHAOS-PARTITION\n-A INPUT -j CHAOS-PACKET\n" +
		"-A CHAOS-PARTITION -s 10.0.0.2/32 -d 10.0.0.1/32 -j DROP\n-A CHAOS-PARTITION-X -j DROP\n"
	assert.Equal(t, "iptables chain CHAOS-PARTITION (1 rule)", InInput(PartitionChain).left(rules))
	assert.Equal(t, "iptables chain CHAOS-TARGET (0 rules)", InInput(TargetChain).left(rules))
	assert.Equal(t, "iptables jump to CHAOS-PACKET from INPUT", InInput(PacketChain).left(rules))
	assert.Empty(t, InInput("CHAOS-OTHER").left(rules))
}
