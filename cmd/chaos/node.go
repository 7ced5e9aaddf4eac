package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"chaos/internal/fakeclock"
	"chaos/node"
)

type nodeOptions struct {
	id, dataDir, logDir, clientAddr, peerAddr, peers, clientPeers, clockFile string
	heartbeat, election, requestTimeout                                      time.Duration
	snapshotEntries, maxAppendBytes                                          uint64
	bugs                                                                     []string
	faultHooks, join                                                         bool
	seed                                                                     uint64
}

func newNodeCmd() *cobra.Command {
	o := &nodeOptions{}
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Run one chaos-node KV server (what `chaos run` deploys)",
		Long: `Run one chaos-node: a replicated key-value server on chaos's Raft, with a
write-ahead log in --data-dir, peers on --peer-addr and clients on --client-addr.
A restarted node with the same --data-dir recovers its state.

Client API: GET/PUT/DELETE /kv/{key}, POST /kv/{key}/cas, GET /status, GET /metrics;
membership: GET /members, POST /members (add a learner), POST /members/{id}/promote,
DELETE /members/{id}. Any node accepts any request and forwards writes and
membership changes to the leader.

To grow a cluster, add the node first (POST /members {"name":"n4","peer":...,"client":...}
to any member), start it with --join and --peers naming members to ask, then promote
it once it has caught up. A node that is not a learner of the cluster refuses to start
and writes nothing.`,
		Example: `  chaos node --id n1 --data-dir /var/lib/chaos/n1 \
    --client-addr 127.0.0.11:7000 --peer-addr 127.0.0.11:7001 \
    --peers n1=127.0.0.11:7001,n2=127.0.0.12:7001,n3=127.0.0.13:7001
  chaos node --id n4 --join --data-dir /var/lib/chaos/n4 \
    --client-addr 127.0.0.14:7000 --peer-addr 127.0.0.14:7001 \
    --peers n1=127.0.0.11:7001,n2=127.0.0.12:7001,n3=127.0.0.13:7001`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runNode(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.id, "id", "", "this node's name; must appear in --peers (required)")
	f.StringVar(&o.dataDir, "data-dir", "", "directory for the WAL and snapshots (required; locked while running)")
	f.StringVar(&o.logDir, "log-dir", "", "directory for events.jsonl (default: --data-dir)")
	f.StringVar(&o.clientAddr, "client-addr", "127.0.0.1:7000", "host:port of the HTTP client API")
	f.StringVar(&o.peerAddr, "peer-addr", "127.0.0.1:7001", "host:port for raft peers; outgoing peer connections are dialed from this host")
	f.StringVar(&o.peers, "peers", "", "every initial member's peer address, this node's included: n1=host:port,n2=host:port,... (required); with --join, members to ask")
	f.BoolVar(&o.join, "join", false, "join a running cluster that added this node as a learner (POST /members); ignored once the node has joined")
	f.StringVar(&o.clientPeers, "client-peers", "", "members' client addresses for forwarding writes (default: peer host with this node's client port)")
	f.DurationVar(&o.heartbeat, "heartbeat-interval", 100*time.Millisecond, "leader heartbeat interval (one raft tick)")
	f.DurationVar(&o.election, "election-timeout", time.Second, "base election timeout; randomized over [T, 2T)")
	f.DurationVar(&o.requestTimeout, "request-timeout", 2*time.Second, "client request timeout; past it the answer is 504 (outcome unknown)")
	f.Uint64Var(&o.maxAppendBytes, "max-append-bytes", 0, "entry bytes per append message to a follower (0: 1 MiB; 1: one entry per message)")
	f.Uint64Var(&o.snapshotEntries, "snapshot-entries", 10000, "snapshot and compact the log every this many applied entries")
	f.StringArrayVar(&o.bugs, "bug", nil, "plant a bug (repeatable): "+strings.Join(node.BugNames(), ", "))
	f.BoolVar(&o.faultHooks, "enable-fault-hooks", false, "answer the /faults endpoints (clock skew, peer drops, message faults)")
	f.StringVar(&o.clockFile, "clock-file", os.Getenv(fakeclock.EnvFile),
		"a fake clock's control file the node's clock follows (\"+1.5 x0.5\": 1.5 s ahead, at half speed); default $"+fakeclock.EnvFile+", as libfaketime reads it")
	f.Uint64Var(&o.seed, "seed", 0, "seed for elections and transport faults (0: from the clock)")
	return cmd
}

func (o *nodeOptions) config() (node.Config, error) {
	if o.id == "" || o.dataDir == "" || o.peers == "" {
		return node.Config{}, fmt.Errorf("--id, --data-dir and --peers are required")
	}
	peers, err := node.ParsePeers(o.peers)
	if err != nil {
		return node.Config{}, fmt.Errorf("--peers: %w", err)
	}
	var clientPeers map[string]string
	if o.clientPeers != "" {
		if clientPeers, err = node.ParsePeers(o.clientPeers); err != nil {
			return node.Config{}, fmt.Errorf("--client-peers: %w", err)
		}
	}
	return node.Config{Name: o.id, DataDir: o.dataDir, LogDir: o.logDir, ClientAddr: o.clientAddr,
		PeerAddr: o.peerAddr, Peers: peers, ClientAddrs: clientPeers, HeartbeatInterval: o.heartbeat,
		ElectionTimeout: o.election, RequestTimeout: o.requestTimeout, SnapshotEntries: o.snapshotEntries,
		MaxAppendBytes: o.maxAppendBytes,
		Bugs:           o.bugs, EnableFaultHooks: o.faultHooks, Seed: o.seed, Join: o.join, ClockFile: o.clockFile}, nil
}

func runNode(cmd *cobra.Command, o *nodeOptions) error {
	cfg, err := o.config()
	if err != nil {
		return usageErrorf("node: %v", err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	srv, err := node.New(cfg)
	if err != nil {
		if errors.Is(err, node.ErrConfig) || errors.Is(err, node.ErrNotMember) {
			return usageErrorf("node %s: %v", o.id, err)
		}
		return setupError(fmt.Errorf("node %s: %w", o.id, err))
	}
	if err := srv.Start(); err != nil {
		_ = srv.Stop(context.Background())
		return setupError(fmt.Errorf("node %s: start: %w", o.id, err))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var runErr error
	select {
	case <-sig:
	case runErr = <-srv.Failed():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Stop(ctx); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return setupError(fmt.Errorf("node %s: %w", o.id, runErr))
	}
	return nil
}
