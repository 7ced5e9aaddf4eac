// Package node is chaos-node: a replicated key-value server on the raft
// package, with a write-ahead log, a TCP peer transport, an HTTP client API,
// an event log, Prometheus metrics, fault hooks and planted bugs.
package node

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"chaos/eventlog"
	"chaos/raft"
)

// Config configures one node.
type Config struct {
	// Name is this node's name (n1, ...); it must be a key of Peers unless
	// the node joins.
	Name    string
	DataDir string
	// LogDir holds events.jsonl (default: DataDir).
	LogDir string
	// ClientAddr and PeerAddr are the listen addresses (host:port).
	ClientAddr string
	PeerAddr   string
	// Peers maps every initial member's name, this node's included, to its
	// peer address. With Join, they are the members to ask.
	Peers map[string]string
	// Join makes a node with an empty data directory join a running cluster
	// that added it as a learner (POST /members): it asks Peers for its ID
	// and the members, refusing to start (ErrNotMember, nothing written)
	// if they do not know it. A node that joined once is that member on
	// every restart, Join or not (joinFile). The table of members from the
	// log and snapshots then overrides the flags.
	Join bool
	// ClientAddrs maps names to client addresses, for forwarding to the leader.
	// Missing entries are derived: the peer address's host with ClientAddr's port.
	ClientAddrs       map[string]string
	HeartbeatInterval time.Duration
	ElectionTimeout   time.Duration
	// SnapshotEntries: take a snapshot and compact the log every this many
	// applied entries.
	SnapshotEntries uint64
	// MaxAppendBytes bounds the entry bytes of one append message (0: the
	// raft default of 1 MiB). An append always carries at least one entry,
	// so 1 sends entries one at a time.
	MaxAppendBytes uint64
	// RequestTimeout bounds a client request; past it the answer is 504.
	RequestTimeout time.Duration
	// Bugs are planted bugs by name (see BugNames).
	Bugs             []string
	EnableFaultHooks bool
	// ClockFile, when set, is a fake clock's control file the node's clock
	// follows (see clockFile; `chaos node` takes it from
	// FAKETIME_TIMESTAMP_FILE).
	ClockFile string
	// Seed seeds the node's randomness (elections, transport faults); 0 picks one from the name.
	Seed   uint64
	Logger *slog.Logger
}

// BugNames lists every planted bug chaos-node knows: its own, then the raft
// package's.
func BugNames() []string {
	return append([]string{"stale-read", "dirty-read", "ack-before-commit", "lease-read",
		"lazy-fsync", "no-dir-fsync", "trust-corrupt"}, raft.BugNames()...)
}

// bugSet is the parsed form of Config.Bugs.
type bugSet struct {
	staleRead, dirtyRead, ackBeforeCommit, leaseRead bool
	// The storage bugs (node/wal's and node/snap's): lazyFsync acknowledges
	// before the WAL is fsynced and fsyncs it every lazySyncInterval;
	// noDirSync creates, renames and removes WAL segments and snapshots
	// without fsyncing their directory; trustCorrupt replays WAL records
	// whose checksum fails.
	lazyFsync, noDirSync, trustCorrupt bool
	raft                               raft.Bugs
}

func parseBugs(names []string) (bugSet, error) {
	var b bugSet
	for _, n := range names {
		switch n {
		case "stale-read":
			b.staleRead = true
		case "dirty-read":
			b.dirtyRead = true
		case "ack-before-commit":
			b.ackBeforeCommit = true
		case "lease-read":
			b.leaseRead = true
		case "lazy-fsync":
			b.lazyFsync = true
		case "no-dir-fsync":
			b.noDirSync = true
		case "trust-corrupt":
			b.trustCorrupt = true
		default:
			if !b.raft.Enable(n) {
				return b, fmt.Errorf("unknown bug %q (known: %s)", n, strings.Join(BugNames(), ", "))
			}
		}
	}
	return b, nil
}

// ParsePeers parses "n1=host:port,n2=host:port".
func ParsePeers(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, addr, ok := strings.Cut(part, "=")
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("peer %q: want name=host:port", part)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("peer %s: address %q: %v", name, addr, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("peer %s listed twice", name)
		}
		out[name] = addr
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no peers given")
	}
	return out, nil
}

func (c *Config) validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("node name is empty")
	case c.Name == eventlog.NoVote:
		return fmt.Errorf("node name %q is reserved (the event log's \"no vote\")", c.Name)
	case c.DataDir == "":
		return fmt.Errorf("data directory is empty")
	case c.HeartbeatInterval <= 0:
		return fmt.Errorf("heartbeat interval must be positive")
	case c.ElectionTimeout < 2*c.HeartbeatInterval:
		return fmt.Errorf("election timeout %v must be at least twice the heartbeat interval %v", c.ElectionTimeout, c.HeartbeatInterval)
	case c.RequestTimeout <= 0:
		return fmt.Errorf("request timeout must be positive")
	}
	if _, _, err := net.SplitHostPort(c.ClientAddr); err != nil {
		return fmt.Errorf("client address %q: %v", c.ClientAddr, err)
	}
	if _, _, err := net.SplitHostPort(c.PeerAddr); err != nil {
		return fmt.Errorf("peer address %q: %v", c.PeerAddr, err)
	}
	if c.LogDir == "" {
		c.LogDir = c.DataDir
	}
	if c.SnapshotEntries == 0 {
		c.SnapshotEntries = 10000
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	_, err := parseBugs(c.Bugs)
	return err
}

// clientAddrOf returns where name serves clients.
func (c *Config) clientAddrOf(name string) string {
	if a := c.ClientAddrs[name]; a != "" {
		return a
	}
	host, _, _ := net.SplitHostPort(c.Peers[name])
	_, port, _ := net.SplitHostPort(c.ClientAddr)
	return net.JoinHostPort(host, port)
}
