package bedtest

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The copy runs in a namespace of its own: it has the loopback interface
// alone, where the machine has more.
func TestInOwnNetNSRunsTheTestInAFreshNamespace(t *testing.T) {
	if !InOwnNetNS(t) {
		return
	}
	ifaces, err := net.Interfaces()
	require.NoError(t, err)
	var names []string
	for _, i := range ifaces {
		names = append(names, i.Name)
	}
	assert.Equal(t, []string{"lo"}, names)
}
