package cluster

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"chaos/control"
)

// bootHost is a Remote whose kernel has a given boot id.
type bootHost struct {
	control.Remote
	id   string
	exit int
}

func (h bootHost) Run(context.Context, string) (control.Result, error) {
	return control.Result{Stdout: []byte(h.id + "\n"), ExitCode: h.exit}, nil
}

func TestSharesClock(t *testing.T) {
	ctx := context.Background()
	local := []byte("b1\n")
	vms := map[string]control.Remote{"n1": bootHost{id: "b2"}, "n2": bootHost{id: "b3"}}
	assert.False(t, sharesClock(ctx, vms, local), "VMs have kernels of their own")
	bed := map[string]control.Remote{"n1": bootHost{id: "b2"}, "n2": bootHost{id: "b1"}}
	assert.True(t, sharesClock(ctx, bed, local), "a host on the controller's kernel shares its clock")
	unreadable := map[string]control.Remote{"n1": bootHost{id: "b1", exit: 1}}
	assert.False(t, sharesClock(ctx, unreadable, local))
	assert.False(t, sharesClock(ctx, bed, nil), "without a local boot id nothing is known to be shared")
}

// Local mode's hosts are this machine: their boot id is the controller's.
func TestSharesClockLocally(t *testing.T) {
	local := localBootID()
	if len(local) == 0 {
		t.Skip("no boot id off Linux")
	}
	remotes := map[string]control.Remote{"n1": control.NewLocal("n1")}
	if _, err := os.Stat(bootIDPath); err == nil {
		assert.True(t, sharesClock(context.Background(), remotes, local))
	}
}
