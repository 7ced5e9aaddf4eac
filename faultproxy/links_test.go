package faultproxy

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	addrA = netip.MustParseAddr("10.77.0.11")
	addrB = netip.MustParseAddr("10.77.0.12")
	addrC = netip.MustParseAddr("10.77.0.13")
)

// Owners set their links independently; a lookup finds a link by its
// direction only, and an owner that sets none is gone.
func TestTableOwners(t *testing.T) {
	var tab Table
	slow := Behavior{DelayMS: 50}
	capped := Behavior{RateKbit: 100}
	require.NoError(t, tab.Set("n1", []Link{{From: addrA, To: addrB, Behavior: slow}}))
	require.NoError(t, tab.Set("n2", []Link{{From: addrB, To: addrC, Behavior: capped}}))
	assert.Equal(t, slow, tab.Lookup(addrA, addrB))
	assert.Equal(t, Behavior{}, tab.Lookup(addrB, addrA))
	assert.Equal(t, capped, tab.Lookup(addrB, addrC))

	require.NoError(t, tab.Set("n1", nil))
	assert.Equal(t, Behavior{}, tab.Lookup(addrA, addrB))
	assert.Equal(t, map[string][]Link{"n2": {{From: addrB, To: addrC, Behavior: capped}}}, tab.Owners())
}

// A refused link leaves the owner's links as they were.
func TestTableRefuses(t *testing.T) {
	var tab Table
	ok := Link{From: addrA, To: addrB, Behavior: Behavior{DelayMS: 5}}
	require.NoError(t, tab.Set("n1", []Link{ok}))
	for _, tc := range []struct {
		link Link
		want string
	}{
		{Link{From: addrA, To: addrA}, "set links of n1: link 10.77.0.11 -> 10.77.0.11: a link joins two addresses"},
		{Link{From: netip.MustParseAddr("::1"), To: addrA}, "set links of n1: link ::1 -> 10.77.0.11: want two IPv4 addresses"},
		{Link{To: addrA}, "set links of n1: link invalid IP -> 10.77.0.11: want two IPv4 addresses"},
		{Link{From: addrA, To: addrB, Behavior: Behavior{RateKbit: -5}}, "set links of n1: link 10.77.0.11 -> 10.77.0.12: negative rate -5 kbit/s"},
	} {
		require.EqualError(t, tab.Set("n1", []Link{tc.link}), tc.want)
	}
	require.EqualError(t, tab.Set("", nil), "set links: no owner named")
	assert.Equal(t, ok.Behavior, tab.Lookup(addrA, addrB))
}
