package testrun

import (
	"strings"

	"chaos/cluster"
	"chaos/db"
	"chaos/db/described"
	"chaos/faultfs"
	"chaos/testrun/runrecord"
	"chaos/workload"
)

// Described systems (--db PATH.yaml) in a run: their description is
// loaded by Options.Complete and checked by Validate, before any host is
// touched.

// validateSystem checks --db: a built-in system, or a description file
// (loaded by Complete) that can run the workload and plant the bugs asked
// for.
func (o *Options) validateSystem() error {
	desc := o.system
	if desc == nil {
		if _, ok := cluster.SystemNamed(o.DB); !ok {
			return usagef("%v", &cluster.UnknownSystemError{Name: o.DB})
		}
		return nil
	}
	if o.Workload == "register" || o.Workload == "set" { // another is refused below
		if err := desc.Supports(o.Workload); err != nil {
			return usagef("%v", err)
		}
	}
	if err := desc.CheckBugs(o.Bugs); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// registryError is why the registry's system --db names cannot run as
// the options ask (local mode, planted bugs: its entry's LocalMode and
// Bugs), or nil; nil for a description file, whose checks are
// validateSystem's.
func (o *Options) registryError() error {
	s, ok := cluster.SystemNamed(o.DB)
	switch {
	case !ok:
		return nil
	case !s.LocalMode && len(o.Nodes) == 0:
		return usagef("--db %s needs --nodes: local mode runs %s only", s.Name,
			strings.Join(cluster.SystemNamesWhere(func(s cluster.System) bool { return s.LocalMode }), " or "))
	case !s.Bugs && len(o.Bugs) > 0:
		return usagef("--bug plants bugs in %s only, not in %s",
			strings.Join(cluster.SystemNamesWhere(func(s cluster.System) bool { return s.Bugs }), " or "), s.Name)
	}
	return nil
}

// systemName is the system's name: --db, or the description's name.
func (o *Options) systemName() string {
	if o.system != nil {
		return o.system.Name
	}
	return o.DB
}

// clusterOptions is the cluster the options test.
func (o *Options) clusterOptions() cluster.Options {
	return cluster.Options{Hosts: o.Nodes, SSH: o.SSH, NewDB: o.newDB, Binary: o.Binary, Bugs: o.Bugs,
		ReadConsistency: o.ReadConsistency, StorageFaults: o.storageFaults(), StorageNames: faultfs.Names(o.StorageNames),
		ContainerNodes: o.NodeProcess == NodeProcessContainer}
}

// newDB builds the system under test the options name.
func (o *Options) newDB(cfg db.Config) (db.DB, error) {
	return o.fakeClockConfig(cfg, func(cfg db.Config) (db.DB, error) {
		if o.system != nil {
			return described.New(o.system, cfg)
		}
		return cluster.Open(o.DB, cfg)
	})
}

// restarter is a client that replaces failed processes of its own.
type restarter interface{ Restarts() int }

// clientsSummary sums the restarts of every client made; nil when no
// client restarts processes (no client command).
func clientsSummary(made []workload.Client) *runrecord.ClientsSummary {
	var s *runrecord.ClientsSummary
	for _, cl := range made {
		if r, ok := cl.(restarter); ok {
			if s == nil {
				s = &runrecord.ClientsSummary{}
			}
			s.Restarts += r.Restarts()
		}
	}
	return s
}
