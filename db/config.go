package db

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
	// Storage serves every node's data directory through chaos's fault
	// file system (storage faults: see FaultFS); nil: plain directories.
	Storage *FaultFS
}
