package cluster

import (
	"bytes"
	"context"
	"os"

	"chaos/control"
)

// bootIDPath holds the running kernel's boot id: hosts that print the
// controller's own id run on its kernel (network namespaces, such as the
// testbed's) and share its clock.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// sharesClock reports whether any of remotes runs on the controller's
// kernel, whose boot id is local: then setting that host's system clock
// would set the controller's. A host whose boot id cannot be read is taken
// to have a clock of its own (a real VM without /proc, say); an empty
// local id (not Linux) shares nothing.
func sharesClock(ctx context.Context, remotes map[string]control.Remote, local []byte) bool {
	local = bytes.TrimSpace(local)
	if len(local) == 0 {
		return false
	}
	for _, r := range remotes {
		res, err := r.Run(ctx, "cat "+bootIDPath)
		if err == nil && res.ExitCode == 0 && bytes.Equal(bytes.TrimSpace(res.Stdout), local) {
			return true
		}
	}
	return false
}

// localBootID is this machine's boot id, or nil off Linux.
func localBootID() []byte {
	b, _ := os.ReadFile(bootIDPath)
	return b
}
