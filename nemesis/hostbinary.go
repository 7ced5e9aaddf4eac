package nemesis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"

	"chaos/control"
	"chaos/db"
)

// HostBinary is this chaos binary as the nodes' hosts run it, for what
// chaos runs there itself: the fault proxy (`chaos fault-proxy`) and the
// vdso clock (`chaos vdso-clock`).
type HostBinary struct {
	// Binary is the chaos binary on this machine; "" when it cannot be
	// found (then what needs it is unavailable).
	Binary string
	// Upload copies Binary to Path on a host the first time a fault needs
	// it there, unless the same file is there already. Without it Path is
	// Binary, on hosts that share this machine's files (local mode).
	Upload bool
	// Path is the chaos binary on the hosts.
	Path string
}

// newHostBinary places this executable in layout: copied to BinDir/name
// when upload (a name of its own, so that it never replaces a node's
// binary), used where it is otherwise.
func newHostBinary(layout db.Layout, upload bool, name string) HostBinary {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	b := HostBinary{Binary: exe, Upload: upload, Path: exe}
	if upload {
		b.Path = path.Join(layout.BinDir, name)
	}
	return b
}

// missing says why b cannot run on the hosts, or nil: its binary is an
// executable file on this machine.
func (b *HostBinary) missing() error {
	if b.Binary == "" {
		return errors.New("the chaos binary of this process cannot be found")
	}
	st, err := os.Stat(b.Binary)
	if err != nil {
		return fmt.Errorf("the chaos binary: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("the chaos binary %s is no executable file", b.Binary)
	}
	return nil
}

// installs remembers the hosts (by node) where a HostBinary was checked
// or copied, and the binary's digest. Its user serializes the calls.
type installs struct {
	sum  string
	done map[string]bool
}

// install makes sure b is on r's host (node's), copying it unless the
// same file is there; without b.Upload there is nothing to do.
func (in *installs) install(ctx context.Context, b *HostBinary, r control.Remote, node string) error {
	if !b.Upload || in.done[node] {
		return nil
	}
	if in.sum == "" {
		sum, err := control.FileSHA256(b.Binary)
		if err != nil {
			return err
		}
		in.sum = sum
	}
	if _, err := control.EnsureFile(ctx, r, b.Binary, b.Path, in.sum, 0o755); err != nil {
		return err
	}
	if in.done == nil {
		in.done = map[string]bool{}
	}
	in.done[node] = true
	return nil
}
