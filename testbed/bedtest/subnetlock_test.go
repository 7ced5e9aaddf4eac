package bedtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A subnet's lock is held by one test at a time, and free again when that
// test ends; other subnets are free meanwhile.
func TestLockSubnetTakesTurns(t *testing.T) {
	const subnet = "10.77.99.0/24" // no testbed uses it
	done, cancel := context.WithCancel(context.Background())
	cancel() // the second try must not wait
	t.Run("holder", func(t *testing.T) {
		require.NoError(t, lockSubnet(context.Background(), t, subnet))
		t.Run("same subnet", func(t *testing.T) {
			err := lockSubnet(done, t, subnet)
			assert.ErrorContains(t, err, "subnet 10.77.99.0/24 stayed in use by another test")
		})
		t.Run("other subnet", func(t *testing.T) {
			assert.NoError(t, lockSubnet(done, t, "10.77.98.0/24"))
		})
	})
	assert.NoError(t, lockSubnet(done, t, subnet), "free once its holder ended")
}
