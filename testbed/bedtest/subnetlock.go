package bedtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"chaos/testbed"
)

// lockSubnet holds, until the test ends, an exclusive lock of the
// machine's on subnet (a file in os.TempDir, flock(2)), waiting for it
// while ctx allows. Two tests that bring up a testbed on one subnet (the
// same test run from two checkouts at once) then take turns instead of
// failing on the other's routes. The kernel drops the lock when the
// holder dies.
func lockSubnet(ctx context.Context, t testing.TB, subnet string) error {
	t.Helper()
	if subnet == "" {
		subnet = testbed.DefaultSubnet
	}
	name := "chaos-testbed-" + strings.NewReplacer("/", "_", ":", "_").Replace(subnet) + ".lock"
	f, err := os.OpenFile(filepath.Join(os.TempDir(), name), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("lock of subnet %s: %w", subnet, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			t.Cleanup(func() { _ = f.Close() }) // closing releases the lock
			return nil
		}
		if err != syscall.EWOULDBLOCK {
			_ = f.Close()
			return fmt.Errorf("lock of subnet %s: %w", subnet, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return fmt.Errorf("subnet %s stayed in use by another test: %w", subnet, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
