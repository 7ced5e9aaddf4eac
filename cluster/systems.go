package cluster

import (
	"fmt"
	"strings"

	"chaos/db"
	"chaos/db/described"
	"chaos/workload"
)

// System is one system under test chaos has code for, as --db names it:
// how to build it, how its clients talk to it, and the facts about it a
// run's options are checked against. The system's own code (db/)
// declares what else it can do (db.Capabilities); its client lives in
// workload/. Adding a system is one entry of Systems, and nothing outside
// this registry and db/ tells systems apart by name.
type System struct {
	// Name is the system's name, as --db takes it.
	Name string
	// New builds the system for cfg.
	New func(cfg db.Config) (db.DB, error)
	// Client makes a client of the system's own protocol for node n of d
	// (a system New built); weak reads are the system's serializable or
	// stale ones.
	Client func(d db.DB, n db.Node, weak bool) (workload.Client, error)
	// LocalMode says the system runs in local mode (no --nodes: its nodes
	// are processes of this machine, its binary run in place).
	LocalMode bool
	// Bugs says the system has planted bugs to start with (--bug); Open
	// refuses bugs for one that has none.
	Bugs bool
}

// Registry is a list of systems, each known by its name. Systems is the
// one chaos runs; a test may add an entry to a copy of it and open its
// system as --db would, touching no other file.
type Registry []System

// Systems returns the registry: every system chaos has code for, in the
// order --help lists them. It is the one list of systems.
func Systems() Registry {
	return []System{
		{Name: "chaos-node", New: func(cfg db.Config) (db.DB, error) {
			return &db.ChaosNode{Binary: cfg.Binary, Upload: cfg.Upload, Layout: cfg.Layout, Nodes: cfg.Nodes,
				Bugs: cfg.Bugs, FaultHooks: true, Faketime: cfg.Faketime, Storage: cfg.Storage}, nil
		}, Client: func(d db.DB, n db.Node, weak bool) (workload.Client, error) {
			return workload.NewChaosNodeClient(n.Name, d.ClientAddr(n), workload.ChaosNodeOptions{StaleReads: weak})
		}, LocalMode: true, Bugs: true},
		{Name: "etcd", New: func(cfg db.Config) (db.DB, error) {
			return &db.Etcd{Binary: cfg.Binary, Layout: cfg.Layout, Nodes: cfg.Nodes, Faketime: cfg.Faketime, Storage: cfg.Storage}, nil
		}, Client: func(d db.DB, n db.Node, weak bool) (workload.Client, error) {
			return workload.NewEtcdClient(n.Name, d.ClientAddr(n), workload.EtcdOptions{Serializable: weak})
		}},
	}
}

// SystemNames returns the names of Systems, in order.
func SystemNames() []string { return Systems().NamesWhere(func(System) bool { return true }) }

// SystemNamesWhere returns the names of the Systems that have what has
// asks for (LocalMode, say), in order.
func SystemNamesWhere(has func(System) bool) []string { return Systems().NamesWhere(has) }

// SystemNamed is the registry's entry called name, and false when the
// registry has none (a description file, or no system).
func SystemNamed(name string) (System, bool) { return Systems().Named(name) }

// Lookup is Systems().Lookup.
func Lookup(name string) (*described.Description, error) { return Systems().Lookup(name) }

// Open is Systems().Open.
func Open(name string, cfg db.Config) (db.DB, error) { return Systems().Open(name, cfg) }

// NewClient is Systems().NewClient.
func NewClient(d db.DB, n db.Node, reads string) (workload.Client, error) {
	return Systems().NewClient(d, n, reads)
}

// NamesWhere returns the names of r's systems that have what has asks for
// (LocalMode, say), in order.
func (r Registry) NamesWhere(has func(System) bool) []string {
	var names []string
	for _, s := range r {
		if has(s) {
			names = append(names, s.Name)
		}
	}
	return names
}

// Named is r's entry called name, and false when r has none.
func (r Registry) Named(name string) (System, bool) {
	for _, s := range r {
		if s.Name == name {
			return s, true
		}
	}
	return System{}, false
}

// UnknownSystemError is what --db names when it is neither a system of
// the registry nor a description file.
type UnknownSystemError struct {
	Name  string
	Known []string // the registry's names; nil: Systems'
}

func (e *UnknownSystemError) Error() string {
	known := e.Known
	if known == nil {
		known = SystemNames()
	}
	return fmt.Sprintf("--db %q: want %s, or a description file (PATH.yaml, see examples/systems)", e.Name, strings.Join(known, " or "))
}

// Lookup checks what --db names without touching any host: a system of
// r (nil description), or a description file, loaded and validated. Its
// errors are an *UnknownSystemError or a *described.Error.
func (r Registry) Lookup(name string) (*described.Description, error) {
	if described.IsPath(name) {
		return described.Load(name)
	}
	if _, ok := r.Named(name); !ok {
		return nil, &UnknownSystemError{Name: name, Known: r.NamesWhere(func(System) bool { return true })}
	}
	return nil, nil
}

// Open builds the system --db names for cfg: one of r by name, or the one
// a description file describes.
func (r Registry) Open(name string, cfg db.Config) (db.DB, error) {
	desc, err := r.Lookup(name)
	if err != nil {
		return nil, err
	}
	if desc != nil {
		return described.New(desc, cfg)
	}
	s, _ := r.Named(name)
	if len(cfg.Bugs) > 0 && !s.Bugs {
		return nil, fmt.Errorf("%s has no planted bugs (--bug is for %s)", s.Name,
			strings.Join(r.NamesWhere(func(s System) bool { return s.Bugs }), " or "))
	}
	return s.New(cfg)
}

// NewClient makes a client of d's own protocol for node n, whose reads
// (the register's and the set's final one) follow reads, a read
// consistency: etcd's serializable range, chaos-node's stale GET, a
// described system's {read_consistency}.
func (r Registry) NewClient(d db.DB, n db.Node, reads string) (workload.Client, error) {
	if s, ok := described.From(d); ok {
		return workload.NewDescribedClient(s, n, reads)
	}
	if s, ok := r.Named(d.Name()); ok {
		return s.Client(d, n, reads == ReadSerializable)
	}
	return nil, fmt.Errorf("no client for %s", d.Name())
}
