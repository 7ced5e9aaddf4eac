// Package testrun runs one chaos test end to end, the way `chaos run` does:
// validate, reach the hosts, set up the system under test, run clients and
// the nemesis together, heal, let the cluster recover, run the final reads,
// tear down, pull logs, check, and write the run's store directory.
package testrun

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"chaos/checker"
	"chaos/cluster"
	"chaos/control"
	"chaos/corrupt"
	"chaos/db"
	"chaos/db/described"
	"chaos/faultfs"
	"chaos/nemesis"
	"chaos/workload"
)

// ErrUsage marks errors in the options (exit 254): nothing was started.
var ErrUsage = errors.New("bad option")

// Options are the flags of `chaos run` (docs/FORMATS.md).
type Options struct {
	// Nodes are the hosts (name or address, optionally :port for SSH); empty
	// means local mode: five chaos-nodes on 127.0.0.11..15.
	Nodes []string
	SSH   control.SSHConfig

	DB       string // chaos-node or etcd
	Workload string // register or set
	Keys     int
	// NodeProcess is who runs each node: NodeProcessChaos ("" too: chaos
	// installs and starts it on its host) or NodeProcessContainer (each
	// host is a container whose main process is the node).
	NodeProcess string
	// ReadConsistency is how reads are served: "linearizable" (default)
	// or "serializable" (a node's local state: etcd's serializable range,
	// chaos-node's ?stale=true), the way to check a weaker read mode.
	ReadConsistency string
	// ClockStrategy is how the clock and lease families bend clocks:
	// "hook" (chaos-node's fault hook), "faketime" (the nodes start under
	// a fake clock whose control file chaos rewrites: libfaketime, or
	// chaos-node's own reading of it), "system" (the hosts' real clocks:
	// real VMs only, refused on hosts that share this machine's clock),
	// or "auto" (or empty): hook where the system has hooks, else
	// faketime where it works (nemesis.PickClockStrategy).
	ClockStrategy string
	Concurrency   string // a number, or Nn = N times the node count
	Rate          float64
	TimeLimit     time.Duration
	TestCount     int
	// Nemesis are fault families, "none", or "all"; empty means all the
	// environment supports.
	Nemesis         []string
	NemesisInterval time.Duration
	// StorageFaults serves every node's data directory through chaos's
	// fault file system (--storage-faults), which the storage families
	// need: the default mix then includes them. Naming a storage family in
	// Nemesis turns it on too (see storageFaults).
	StorageFaults bool
	// StorageNames is the fault file system's names model (faultfs.Names:
	// "posix", the default, or "ordered"; --storage-names).
	StorageNames string
	// CorruptFiles and CorruptHows narrow what the corrupt family damages
	// (nemesis.Corrupt's Files and Hows: --corrupt-file, --corrupt-how);
	// empty means every kind of file and every way.
	CorruptFiles   []string
	CorruptHows    []string
	Store          string
	Seed           uint64
	Name           string
	LeaveDBRunning bool
	Bugs           []string
	CheckerTimeout time.Duration
	// Checker is the linearizability algorithm: checker.AlgorithmAuto
	// (write order where values are unique) or checker.AlgorithmSearch
	// (porcupine for every key); empty means auto.
	Checker string
	// Binary is the chaos (or etcd) binary to deploy; empty: this executable
	// (chaos-node) or the hosts' own etcd.
	Binary string
	// RequestTimeout bounds each client request (default 1s).
	RequestTimeout time.Duration
	// Recovery is how long the cluster gets after the final heal before
	// the final reads, and how soon after it clients must succeed again
	// (the availability check's bound). Zero means the system's stated
	// recovery bound (db.Timing.Recovery), else DefaultRecovery as an
	// advisory bound (see RecoveryAdvisory).
	Recovery time.Duration
	// recoveryAdvisory is set by Complete when neither --recovery nor the
	// system states a bound: a later recovery is reported, not invalid.
	recoveryAdvisory bool
	// nameDefaulted says Complete made Name of the system, workload,
	// faults and bugs (--name was not given).
	nameDefaulted bool
	// Argv is the command line, recorded in test.json with its secret
	// values redacted (secret.Args).
	Argv []string

	// system is the description DB names when it is a file, loaded by
	// Complete; nil for a built-in system.
	system *described.Description
}

// Who runs the nodes (Options.NodeProcess).
const (
	NodeProcessChaos     = "chaos"
	NodeProcessContainer = "container"
)

// Read consistencies of Options.ReadConsistency.
const (
	ReadLinearizable = cluster.ReadLinearizable
	ReadSerializable = cluster.ReadSerializable
)

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, args...)...)
}

// Prepare readies the options for a run: Complete, then Validate. Run
// calls it; test-all calls it on every test of a campaign before running
// any. Its errors wrap ErrUsage. Calling it again changes nothing.
func (o *Options) Prepare() error {
	if err := o.Complete(); err != nil {
		return err
	}
	return o.Validate()
}

// Complete is the one place the options' defaults are filled, each only
// where its field is zero: the description --db names is loaded, the
// request timeout is 1s, the recovery bound is the system's stated one
// (else DefaultRecovery, advisory), and the name is made of the system,
// workload, faults and bugs. It touches no host. Its error (wrapping
// ErrUsage) is a --db that names nothing chaos can build.
func (o *Options) Complete() error {
	desc, err := cluster.Lookup(o.DB)
	if err != nil {
		return usagef("%v", err)
	}
	o.system = desc
	if o.RequestTimeout == 0 {
		o.RequestTimeout = time.Second
	}
	if o.Recovery == 0 && o.registryError() == nil {
		if err := o.resolveRecovery(); err != nil {
			return err
		}
	}
	if o.Name == "" {
		o.Name, o.nameDefaulted = o.defaultName(), true
	}
	return nil
}

// Validate checks the options without touching anything or changing
// them; Complete must have filled their defaults. Its errors wrap
// ErrUsage.
func (o *Options) Validate() error {
	for _, check := range []func() error{o.validateSystem, o.validateValues, o.validateCorrupt, o.validateStorage, o.validateLists} {
		if err := check(); err != nil {
			return err
		}
	}
	nodes := len(o.Nodes)
	if nodes == 0 {
		nodes = cluster.MaxLocalNodes
	}
	if _, err := workload.ParseConcurrency(o.Concurrency, nodes); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if o.RequestTimeout < 0 || o.Recovery < 0 {
		return usagef("--request-timeout and --recovery must not be negative")
	}
	if o.RequestTimeout == 0 || o.Recovery == 0 || o.Name == "" {
		return usagef("the options' defaults are not filled in: call Complete (or Prepare) first")
	}
	if err := CheckName(o.Name); err != nil && o.nameDefaulted {
		return usagef("the test name %q made of the system, workload, faults and bugs %v; give one with --name", o.Name, err)
	} else if err != nil {
		return usagef("--name %q %v", o.Name, err)
	}
	return nil
}

// validateStorage checks --storage-names: a known model, and a run that
// uses the fault file system.
func (o *Options) validateStorage() error {
	if _, err := faultfs.ParseNames(o.StorageNames); err != nil {
		return usagef("--storage-names: %v", err)
	}
	if o.StorageNames != "" && !o.storageFaults() {
		return usagef("--storage-names applies to the fault file system, which this run does not use: add --storage-faults or a storage family to --nemesis")
	}
	return nil
}

// validateLists checks --nodes (each host once) and --nemesis (known
// families, none or all).
func (o *Options) validateLists() error {
	seen := map[string]bool{}
	for _, n := range o.Nodes {
		if seen[n] {
			return usagef("--nodes lists %s twice", n)
		}
		seen[n] = true
	}
	for _, f := range o.Nemesis {
		if f != "none" && f != "all" && !slices.Contains(nemesis.FamilyNames(), f) {
			return usagef("--nemesis %q: want a comma list of %s, or none, or all", f, strings.Join(nemesis.FamilyNames(), ","))
		}
	}
	return nil
}

// validateValues checks the values of the flags one by one, and what the
// registry's system --db names can do (registryError), in that order.
func (o *Options) validateValues() error {
	switch {
	case o.Workload != "register" && o.Workload != "set":
		return usagef("--workload %q: want register or set", o.Workload)
	case o.NodeProcess != "" && o.NodeProcess != NodeProcessChaos && o.NodeProcess != NodeProcessContainer:
		return usagef("--node-process %q: want %s or %s", o.NodeProcess, NodeProcessChaos, NodeProcessContainer)
	case o.NodeProcess == NodeProcessContainer && !slices.ContainsFunc(o.Nodes, isContainer):
		return usagef("--node-process container: give the containers that are the nodes (--nodes docker:NAME,...)")
	case o.ReadConsistency != ReadLinearizable && o.ReadConsistency != ReadSerializable:
		return usagef("--read-consistency %q: want %s or %s", o.ReadConsistency, ReadLinearizable, ReadSerializable)
	case !slices.Contains([]string{"", ClockAuto, string(nemesis.ClockHook), string(nemesis.ClockVDSO), string(nemesis.ClockFaketime), string(nemesis.ClockSystem)}, o.ClockStrategy):
		return usagef("--clock-strategy %q: want %s, %s, %s, %s or %s", o.ClockStrategy, ClockAuto, nemesis.ClockHook, nemesis.ClockVDSO, nemesis.ClockFaketime, nemesis.ClockSystem)
	case o.Keys < 1:
		return usagef("--keys %d: want at least 1", o.Keys)
	case o.Rate < 0:
		return usagef("--rate %v: want 0 (as fast as possible) or a positive rate", o.Rate)
	case o.TimeLimit <= 0:
		return usagef("--time-limit %v: want a positive duration such as 60s", o.TimeLimit)
	case o.TestCount < 1:
		return usagef("--test-count %d: want at least 1", o.TestCount)
	case o.NemesisInterval <= 0:
		return usagef("--nemesis-interval %v: want a positive duration such as 10s", o.NemesisInterval)
	case o.CheckerTimeout < 0:
		return usagef("--checker-timeout %v: want a positive duration, or 0 for no bound", o.CheckerTimeout)
	case !checker.KnownAlgorithm(o.Checker):
		return usagef("--checker %q: want %s or %s", o.Checker, checker.AlgorithmAuto, checker.AlgorithmSearch)
	case o.Store == "":
		return usagef("--store is empty: give a directory such as ./store")
	}
	if err := o.registryError(); err != nil {
		return err
	}
	if len(o.Nodes) == 0 && o.ClockStrategy == string(nemesis.ClockSystem) && slices.Contains(o.Nemesis, "clock") {
		// Known before any host is looked at (and before local mode's lock).
		return usagef("--clock-strategy system sets the hosts' real clock, and local mode's nodes share this machine's clock: refused; use --clock-strategy hook")
	}
	if o.ClockStrategy == string(nemesis.ClockSystem) && slices.ContainsFunc(o.Nodes, isContainer) {
		return usagef("--clock-strategy system sets the hosts' real clock, and a container's clock is its Docker host's: refused on docker: hosts; use --clock-strategy vdso or hook")
	}
	return nil
}

// isContainer says whether host is a Docker container (docker:NAME or a
// compose project's).
func isContainer(host string) bool { return strings.HasPrefix(host, control.DockerPrefix) }

func (o *Options) defaultName() string {
	nem := strings.Join(o.Nemesis, "+")
	if nem == "" {
		nem = "all"
	}
	name := o.systemName() + "-" + o.Workload + "-" + nem
	if len(o.Bugs) > 0 {
		name += "-bug-" + strings.Join(o.Bugs, "+")
	}
	return name
}

// DefaultRecovery is the recovery period of a run whose system states no
// recovery bound and that gives no --recovery.
const DefaultRecovery = 5 * time.Second

// resolveRecovery settles Recovery: --recovery when given, else the
// system's stated bound (built-in systems state tuned ones; a description
// may, with timing.recovery), else DefaultRecovery, advisory: a system
// whose recovery nobody stated is not failed for a slow one (a JVM's
// restart, a client library's reconnect backoff), only told.
func (o *Options) resolveRecovery() error {
	d, err := o.newDB(db.Config{}) // builds the system's description only: no host is touched
	if err != nil {
		return usagef("%v", err)
	}
	if stated := db.CapabilitiesOf(d).Timing.Recovery; stated > 0 {
		o.Recovery = stated
		return nil
	}
	o.Recovery, o.recoveryAdvisory = DefaultRecovery, true
	return nil
}

// storageNames is the names model recorded in test.json: the one in
// force when storage faults are on, "" otherwise.
func (o *Options) storageNames() string {
	if !o.storageFaults() {
		return ""
	}
	n, _ := faultfs.ParseNames(o.StorageNames)
	return string(n)
}

// validateCorrupt checks --corrupt-file and --corrupt-how: known kinds,
// and a run whose faults may include the corrupt family.
func (o *Options) validateCorrupt() error {
	for _, f := range o.CorruptFiles {
		if !slices.Contains(corrupt.Targets(), f) {
			return usagef("--corrupt-file %q: want a comma list of %s", f, strings.Join(corrupt.Targets(), ","))
		}
	}
	for _, h := range o.CorruptHows {
		if !slices.Contains(corrupt.Hows(), h) {
			return usagef("--corrupt-how %q: want a comma list of %s", h, strings.Join(corrupt.Hows(), ","))
		}
	}
	if (len(o.CorruptFiles) > 0 || len(o.CorruptHows) > 0) && !o.corruptMayRun() {
		return usagef("--corrupt-file and --corrupt-how narrow the corrupt family, which this run does not include: add corrupt to --nemesis (or --storage-faults with the default mix)")
	}
	return nil
}

// corruptMayRun reports whether the corrupt family is among the faults:
// named in --nemesis, or in the default mix with storage faults on.
func (o *Options) corruptMayRun() bool {
	if slices.Contains(o.Nemesis, "none") {
		return false
	}
	mix := len(o.Nemesis) == 0 || slices.Contains(o.Nemesis, "all")
	return slices.Contains(o.Nemesis, nemesis.CorruptFamily) || mix && o.storageFaults()
}

// storageFaults reports whether the nodes' data directories are served
// through the fault file system: --storage-faults, or a storage family
// named in --nemesis.
func (o *Options) storageFaults() bool {
	return o.StorageFaults || slices.ContainsFunc(o.Nemesis, func(f string) bool { return slices.Contains(nemesis.StorageFamilies(), f) })
}
