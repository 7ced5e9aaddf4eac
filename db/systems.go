package db

import (
	"fmt"
	"strings"
)

// Config is what building a system under test takes.
type Config struct {
	// Nodes are all members of the cluster.
	Nodes  []Node
	Layout Layout
	// Binary is the local binary to deploy; empty means the system's
	// default (this executable for chaos-node, the hosts' own etcd).
	Binary string
	// Upload copies Binary to the hosts; local mode runs it in place.
	Upload bool
	// Bugs are planted bugs; only chaos-node has any.
	Bugs []string
	// Faketime starts the nodes under a fake clock where their program
	// allows it (see FakeClocker): the clock family's faketime strategy
	// needs it.
	Faketime bool
}

// System describes one system under test of the registry.
type System struct {
	// Name is the system's name, as --db takes it.
	Name string
	// New builds the system for cfg.
	New func(cfg Config) (DB, error)
}

// Systems returns the registry: every system chaos can test, in the order
// --help lists them. It is the one list of systems.
func Systems() []System {
	return []System{
		{Name: chaosNodeName, New: func(cfg Config) (DB, error) {
			return &ChaosNode{Binary: cfg.Binary, Upload: cfg.Upload, Layout: cfg.Layout, Nodes: cfg.Nodes,
				Bugs: cfg.Bugs, FaultHooks: true, Faketime: cfg.Faketime}, nil
		}},
		{Name: etcdName, New: func(cfg Config) (DB, error) {
			if len(cfg.Bugs) > 0 {
				return nil, fmt.Errorf("etcd has no planted bugs (--bug is for chaos-node)")
			}
			return &Etcd{Binary: cfg.Binary, Layout: cfg.Layout, Nodes: cfg.Nodes, Faketime: cfg.Faketime}, nil
		}},
	}
}

// SystemNames returns the names of Systems, in order.
func SystemNames() []string {
	systems := Systems()
	names := make([]string, len(systems))
	for i, s := range systems {
		names[i] = s.Name
	}
	return names
}

// UnknownSystemError is returned by New for a name the registry lacks.
type UnknownSystemError struct{ Name string }

func (e *UnknownSystemError) Error() string {
	return fmt.Sprintf("--db %q: want %s, or a description file (PATH.yaml, see examples/systems)", e.Name, strings.Join(SystemNames(), " or "))
}

// New builds the system called name. A name the registry does not hold is
// an *UnknownSystemError.
func New(name string, cfg Config) (DB, error) {
	for _, s := range Systems() {
		if s.Name == name {
			return s.New(cfg)
		}
	}
	return nil, &UnknownSystemError{Name: name}
}

// Known reports whether the registry holds a system called name.
func Known(name string) bool {
	for _, s := range Systems() {
		if s.Name == name {
			return true
		}
	}
	return false
}
