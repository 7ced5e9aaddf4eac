package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
	"chaos/nemesis/hostcmd"
)

// The storage families, power-loss, corrupt, disk-full and eio, act below
// the node's process: on its data directory, which the system serves
// through chaos's fault file system (db.StorageMount, package faultfs) when
// storage faults are on. They share what follows: where a node's mount is,
// whether a host can serve one, and the heal that ends error injection and
// removes the mounts an earlier run left.

// The storage families' names.
const (
	PowerLossFamily = faultrec.NamePowerLoss
	CorruptFamily   = faultrec.NameCorrupt
	DiskFullFamily  = faultrec.NameDiskFull
	EIOFamily       = faultrec.NameEIO
)

// StorageFamilies are the names of the storage families, in the
// registry's order: naming one in --nemesis serves the data directories
// through the fault file system.
func StorageFamilies() []string {
	return []string{PowerLossFamily, CorruptFamily, DiskFullFamily, EIOFamily}
}

// StorageUnavailableError is why a host cannot serve a node's data
// directory through the fault file system (no /dev/fuse, no FUSE in its
// kernel, not root, no chaos binary): a setup failure of that host, not
// a mistake in the options.
type StorageUnavailableError struct{ Err error }

func (e *StorageUnavailableError) Error() string { return e.Err.Error() }
func (e *StorageUnavailableError) Unwrap() error { return e.Err }

// errStorageOff is why a storage family cannot run on a cluster whose
// data directories are plain ones.
var errStorageOff = errors.New("the nodes' data directories are not served through the fault file system " +
	"(run with --storage-faults, or name a storage family in --nemesis)")

// storageMount is n's data directory as c's system places it, which must
// be served through the fault file system.
func storageMount(c *Cluster, n db.Node) (db.StorageMount, error) {
	if c.Storage == nil {
		return db.StorageMount{}, fmt.Errorf("%s keeps no data directory chaos knows of (no Storage capability)", systemName(c))
	}
	m := c.Storage.StorageMount(n)
	if m.FS == nil {
		return m, errStorageOff
	}
	return m, nil
}

// StorageAvailable says why c's nodes cannot run on the fault file
// system, or nil: each node's data directory must be known and served
// through it, the chaos binary that serves it must be on this machine,
// and each host must pass hostcmd.StorageProbeScript. It changes nothing. An
// error of a host is a *StorageUnavailableError naming the node, the
// host and what is missing, in one line.
func StorageAvailable(ctx context.Context, c *Cluster) error {
	if err := requireRemotes("storage faults", c); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		m, err := storageMount(c, n)
		if err != nil {
			return err
		}
		if err := binaryMissing(m.FS.Binary); err != nil {
			return &StorageUnavailableError{Err: fmt.Errorf("%s: the chaos binary that serves the fault file system: %w", n.Name, err)}
		}
		r, _ := nodeRemote(c, n)
		out, err := control.Output(ctx, r, hostcmd.StorageProbeScript)
		if err != nil {
			return &StorageUnavailableError{Err: fmt.Errorf("%s (%s): probe fault file system support: %w", n.Name, r.Host(), err)}
		}
		if why := strings.TrimSpace(string(out)); why != "ok" {
			return &StorageUnavailableError{Err: fmt.Errorf("%s (%s): cannot serve the fault file system: %s", n.Name, r.Host(), why)}
		}
	}
	return nil
}

// binaryMissing says why p is no executable file on this machine, or nil.
func binaryMissing(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is no executable file", p)
	}
	return nil
}

// storageAvailable is StorageAvailable with family's name in front.
func storageAvailable(ctx context.Context, family string, c *Cluster) error {
	if err := StorageAvailable(ctx, c); err != nil {
		var su *StorageUnavailableError
		if errors.As(err, &su) {
			return &StorageUnavailableError{Err: fmt.Errorf("%s: %w", family, su.Err)}
		}
		return fmt.Errorf("%s: %w", family, err)
	}
	return nil
}

// storageHeal heals what the storage families can leave on a host,
// whether or not this process injected it: error injection in a fault
// file system still serving, and the fault file system of a node that no
// longer runs (a controller killed mid-run leaves it mounted; one whose
// server died leaves a dead mount). The mount of a node that runs stays:
// the node's data is in it; the next run's setup stops the node and
// unmounts. It acts by the paths alone, so it needs no storage faults on
// (chaos heal builds the system without them).
type storageHeal struct{}

func (storageHeal) Name() string { return PowerLossFamily }

func (storageHeal) Available(context.Context, *Cluster) error { return nil }

func (storageHeal) Start(context.Context, *Cluster, *rand.Rand) (Op, error) {
	return Op{}, errors.New("storage heal: not a fault")
}

func (storageHeal) Stop(context.Context, *Cluster) (Op, error) { return Op{}, nil }

// Heal ends error injection where the node runs, and unmounts where it
// does not, on every node of c whose data directory c's system places.
func (storageHeal) Heal(ctx context.Context, c *Cluster) error {
	if c.Storage == nil {
		return nil
	}
	return wrapFamily("storage", eachNode(c.Nodes, func(n db.Node) error {
		r, err := nodeRemote(c, n)
		if err != nil {
			return err
		}
		m := c.Storage.StorageMount(n)
		if nodeRuns(ctx, c, r, n) {
			return clearLeftErrors(ctx, r, m)
		}
		return m.Unmount(ctx, r)
	}))
}

// leftovers names the fault file system's process and mount on n's host.
func (storageHeal) leftovers(ctx context.Context, c *Cluster, n db.Node) ([]string, error) {
	if c.Storage == nil {
		return nil, nil
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return nil, err
	}
	return c.Storage.StorageMount(n).Leftovers(ctx, r)
}

// nodeRuns reports whether n's process runs, as far as the system can
// tell; a system that cannot say is taken to run (its mount stays).
func nodeRuns(ctx context.Context, c *Cluster, r control.Remote, n db.Node) bool {
	if c.Processes == nil {
		return true
	}
	p, err := c.Processes.Process(ctx, r, n)
	return err != nil || p.Pid != 0
}

// clearLeftErrors ends error injection in m's file system if it runs,
// through the binary that runs it (/proc/PID/exe: chaos heal need not know
// where it was uploaded).
func clearLeftErrors(ctx context.Context, r control.Remote, m db.StorageMount) error {
	p, err := m.Daemon.Process(ctx, r)
	if err != nil || p.Pid == 0 {
		return err
	}
	cmd := fmt.Sprintf("/proc/%d/exe faultfs clear --control %s", p.Pid, control.ShellQuote(m.Socket))
	if _, err := control.Output(ctx, r, cmd); err != nil {
		return fmt.Errorf("%s: end error injection: %w", m.Node, err)
	}
	return nil
}

// undoRefusals is, by node, how many changes its fault file system has
// refused for want of room to keep their old bytes (faultfs.Status's
// UndoRefused): errors of chaos's making that the run's heal record names,
// so that a node that failed on them is not taken for a bug. Nodes with
// none refused are absent, and so are those whose file system does not
// answer (nothing can be said of them); nil without storage faults (a
// system may place its data directories, c.Storage, and run without the
// fault file system).
func undoRefusals(ctx context.Context, c *Cluster) map[string]int64 {
	if c.Storage == nil {
		return nil
	}
	counts, _ := mapNodes(c.Nodes, func(n db.Node) (int64, error) {
		r, err := nodeRemote(c, n)
		if err != nil {
			return 0, err
		}
		m := c.Storage.StorageMount(n)
		if m.FS == nil { // storage faults off: the data directory is the system's own
			return 0, nil
		}
		st, err := m.Host().Status(ctx, r)
		return st.UndoRefused, err
	})
	var out map[string]int64
	for i, n := range c.Nodes {
		if counts[i] > 0 {
			if out == nil {
				out = map[string]int64{}
			}
			out[n.Name] = counts[i]
		}
	}
	return out
}

// storageHealers heals what every storage family leaves (see storageHeal).
func storageHealers(bool) []Fault { return []Fault{storageHeal{}} }
