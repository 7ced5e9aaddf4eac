package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"chaos/eventlog"
	"chaos/node/kv"
	"chaos/node/nodeapi"
	"chaos/node/snap"
	"chaos/node/transport"
	"chaos/node/wal"
	"chaos/raft"
)

// ErrConfig wraps every error New returns for a bad configuration.
var ErrConfig = errors.New("invalid configuration")

// ErrDamagedStorage wraps the error New returns when the data directory
// holds damage recovery must not guess around: a WAL record that fails its
// checksum and is not a torn tail (wal.ErrCorrupt: a bad record followed
// by valid ones, a bad record in a segment that is not the last, a missing
// segment), snapshots that all fail theirs, or a log that does not follow
// on from its snapshot. The node then refuses to start, and stays down
// with that one error line, rather than serve or vote with state it may
// have lost (acknowledged entries, a vote). The data directory is left
// as it is, for inspection; an operator may wipe it, remove the member
// and add the node back as a new one.
//
// A torn tail (a bad record with nothing valid after it, at the end of
// the last segment) is what a crash during a write leaves: it is
// truncated (a warning) and the node starts. Damage confined to the last
// records of the last segment, records that were fsynced and may have
// been acknowledged, is told from a torn write by the segment's sync
// block (package wal): the node then starts without them but abstains,
// neither voting nor campaigning until a leader has caught it up
// (catchup.go). Its start event says so (lost), and the raft check lists
// the loss as the fault's (lost-to-damage), not as the node's
// came-back-with-less.
var ErrDamagedStorage = errors.New("refusing to start: damaged storage, this node could serve or vote with lost state")

// Server is one running chaos-node.
type Server struct {
	cfg     Config
	bugs    bugSet
	id      uint64
	members *memberTable
	// joined: the node joined a running cluster (joinFile); it starts
	// with raft's Config.Join instead of the peer flags' configuration.
	joined bool
	// startConf is the configuration as of the recovered snapshot (the
	// initial one without a snapshot; empty for a node that joined).
	startConf raft.ConfState
	log       *slog.Logger
	events    *eventlog.Writer
	metrics   *metrics
	store     *kv.Store
	disk      *storage
	rn        *raft.RawNode // owned by the event loop goroutine
	clock     *skewClock
	clockFile *clockFile // nil without Config.ClockFile
	trans     *transport.Transport
	httpLn    net.Listener
	http      *http.Server
	fwd       *http.Client

	propC  chan *proposal
	readC  chan *readRequest
	confC  chan *confRequest
	recvC  chan inbound
	stopC  chan struct{}
	loopWG sync.WaitGroup

	status  atomic.Pointer[nodeapi.Status]
	conf    atomic.Pointer[raft.ConfState] // raft's configuration in force, as of the last Ready
	nextCtx atomic.Uint64
	// appendLimit is the append limit the fault hook set (nil or zero:
	// none); the event loop hands it to raft.
	appendLimit atomic.Pointer[nodeapi.AppendLimit]
	stopped     atomic.Bool
	failed      chan error // the event loop's fatal error, if any
	// crashed is set before the event loop's fatal error is sent on
	// failed: the node then stops as a killed one does, without a stop
	// event (a role event it logged ahead of the write that failed may
	// name a term it never persisted, and the raft check excuses that
	// term only when the role event is the life's last).
	crashed atomic.Bool
}

// New opens the node's data directory (locking it), recovers its state and
// binds its listeners. Start runs it.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	bugs, _ := parseBugs(cfg.Bugs)
	s := &Server{cfg: cfg, bugs: bugs, log: cfg.Logger.With("node", cfg.Name), metrics: newMetrics(),
		store: kv.NewStore(), clock: newSkewClock(time.Now),
		propC: make(chan *proposal, 4096), readC: make(chan *readRequest, 4096), confC: make(chan *confRequest, 16),
		recvC: make(chan inbound, 1024), stopC: make(chan struct{}), failed: make(chan error, 1)}
	if cfg.ClockFile != "" {
		s.clockFile = newClockFile(cfg.ClockFile, os.ReadFile, s.clock, s.log)
	}
	if err := s.identify(); err != nil {
		return nil, err
	}
	if err := s.open(); err != nil {
		s.closeResources()
		return nil, err
	}
	return s, nil
}

func (s *Server) open() error {
	var err error
	if s.disk, err = openStorage(s.cfg.DataDir, storageOptions{bugs: s.bugs, lazySyncEvery: lazySyncInterval, logger: s.log}); err != nil {
		return err
	}
	if s.events, err = eventlog.Open(s.cfg.LogDir, s.cfg.Name); err != nil {
		return err
	}
	if err := s.recover(); err != nil {
		return err
	}
	if s.httpLn, err = net.Listen("tcp", s.cfg.ClientAddr); err != nil {
		return fmt.Errorf("client listener: %w", err)
	}
	peerLn, err := net.Listen("tcp", s.cfg.PeerAddr)
	if err != nil {
		return fmt.Errorf("peer listener: %w", err)
	}
	host, _, _ := net.SplitHostPort(s.cfg.PeerAddr)
	s.trans, err = transport.New(transport.Config{ID: s.id, Listener: peerLn, Peers: s.peerAddrs(s.rn.Status().Conf),
		LocalIP: net.ParseIP(host), Handler: s.receive, PeerLost: s.peerLost, Logger: s.log,
		Rand: rand.New(rand.NewPCG(s.seed(), 7)), KeepAlive: s.cfg.HeartbeatInterval})
	if err != nil {
		peerLn.Close()
		return err
	}
	s.http = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	s.fwd = &http.Client{Timeout: s.cfg.RequestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return nil
}

func (s *Server) seed() uint64 {
	if s.cfg.Seed != 0 {
		return s.cfg.Seed
	}
	return uint64(time.Now().UnixNano())
}

// recover rebuilds the state machine, the address book and the raft core
// from disk.
func (s *Server) recover() error {
	st, info, err := s.disk.recover()
	if errors.Is(err, wal.ErrCorrupt) || errors.Is(err, snap.ErrCorrupt) {
		return fmt.Errorf("%w: %s: %w", ErrDamagedStorage, s.cfg.DataDir, err)
	}
	if err != nil {
		return fmt.Errorf("recover %s: %w", s.cfg.DataDir, err)
	}
	if info.TruncatedBytes > 0 {
		s.log.Warn("truncated a torn WAL tail", "segment", info.TruncatedSegment, "bytes", info.TruncatedBytes)
	}
	if info.Lost {
		s.log.Warn("storage lost records it had made durable: not voting or campaigning until a leader has caught this node up",
			"reason", info.LostReason)
	}
	var voters []uint64
	if !s.joined {
		for _, m := range initialMembers(&s.cfg) {
			voters = append(voters, m.ID)
		}
		s.startConf = raft.ConfState{Voters: voters}
	}
	if st.Snapshot != nil {
		img, err := decodeImage(st.Snapshot.Data)
		if err != nil {
			return err
		}
		s.startConf = img.conf()
		st.Snapshot.Meta.ConfState = s.startConf
		if err := s.restoreImage(img); err != nil {
			return err
		}
	}
	s.learnEntries(st.Entries)
	ticks := int(s.cfg.ElectionTimeout / s.cfg.HeartbeatInterval)
	rc := raft.Config{ID: s.id, Peers: voters, Join: s.joined, ElectionTick: ticks, HeartbeatTick: 1, Seed: s.seed(),
		PreVote: true, CheckQuorum: true, MaxMsgBytes: s.cfg.MaxAppendBytes, Bugs: s.bugs.raft, Logger: s.log,
		Abstain: info.Lost}
	if s.bugs.leaseRead {
		rc.ReadOnly = raft.ReadLeaseBased
	}
	if s.rn, err = raft.NewRawNode(rc, st); err != nil {
		// A gap between the snapshot and the log, say: damage too.
		return fmt.Errorf("%w: %s: %w", ErrDamagedStorage, s.cfg.DataDir, err)
	}
	s.events.Emit(eventlog.Event{Event: eventlog.KindStart, Term: st.HardState.Term, For: s.voteName(st.HardState.Vote),
		Index: lastIndex(st), Entries: len(st.Entries), Truncated: info.TruncatedBytes, Lost: info.LostReason, Bugs: strings.Join(s.cfg.Bugs, ",")})
	if st.Snapshot != nil {
		s.events.Emit(eventlog.Event{Event: eventlog.KindRestore, Index: st.Snapshot.Meta.Index, Term: st.Snapshot.Meta.Term})
	}
	if len(s.startConf.Voters) > 0 {
		var index, term uint64
		if st.Snapshot != nil {
			index, term = st.Snapshot.Meta.Index, st.Snapshot.Meta.Term
		}
		s.emitConf(index, term, "", s.startConf)
	}
	if len(s.cfg.Bugs) > 0 {
		s.log.Warn("PLANTED BUGS ENABLED: this node is deliberately unsafe", "bugs", strings.Join(s.cfg.Bugs, ","))
	}
	s.publishStatus()
	return nil
}

// voteName is the start event's name of the vote recovered.
func (s *Server) voteName(id uint64) string {
	if id == raft.None {
		return eventlog.NoVote
	}
	if n := s.name(id); n != "" {
		return n
	}
	return fmt.Sprint(id)
}

// lastIndex is the last log index of a recovered state: its last entry's,
// or its snapshot's.
func lastIndex(st raft.State) uint64 {
	if n := len(st.Entries); n > 0 {
		return st.Entries[n-1].Index
	}
	if st.Snapshot != nil {
		return st.Snapshot.Meta.Index
	}
	return 0
}

// Start runs the event loop, the peer transport and the client API.
func (s *Server) Start() error {
	if err := s.trans.Start(); err != nil {
		return err
	}
	s.loopWG.Add(1)
	go s.loop()
	go func() {
		if err := s.http.Serve(s.httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("client API stopped", "err", err)
		}
	}()
	s.log.Info("started", "client", s.cfg.ClientAddr, "peer", s.cfg.PeerAddr, "id", s.id)
	return nil
}

// Failed returns a channel that yields the event loop's fatal error (a
// failed fsync, say), after which the node must exit.
func (s *Server) Failed() <-chan error { return s.failed }

// Stop shuts the node down: client API, event loop, transport, storage.
func (s *Server) Stop(ctx context.Context) error {
	if !s.stopped.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	if s.http != nil {
		errs = append(errs, s.http.Shutdown(ctx))
	}
	close(s.stopC)
	s.loopWG.Wait()
	if !s.crashed.Load() {
		s.events.Emit(eventlog.Event{Event: eventlog.KindStop})
	}
	errs = append(errs, s.closeResources())
	return errors.Join(errs...)
}

func (s *Server) closeResources() error {
	var errs []error
	if s.trans != nil {
		errs = append(errs, s.trans.Close())
	} else if s.httpLn != nil {
		s.httpLn.Close()
	}
	if s.disk != nil {
		errs = append(errs, s.disk.close())
	}
	if s.events != nil {
		errs = append(errs, s.events.Close())
	}
	return errors.Join(errs...)
}

// receive is the transport's handler: batches go to the event loop.
func (s *Server) receive(msgs []raft.Message) { s.queueInbound(inbound{msgs: msgs}) }

// peerLost hands the loop the end of a peer's connection, after the
// messages read from it (the transport calls both from the connection's
// reader goroutine, and recvC keeps their order).
func (s *Server) peerLost(id uint64) { s.queueInbound(inbound{lost: id}) }

func (s *Server) queueInbound(in inbound) {
	select {
	case s.recvC <- in:
	case <-s.stopC:
	}
}

// inbound is what the transport hands the loop: a batch of messages, or
// (lost non-zero) the end of the connection from peer lost.
type inbound struct {
	msgs []raft.Message
	lost uint64
}

func (s *Server) name(id uint64) string { return s.members.name(id) }

func (s *Server) publishStatus() {
	st := s.rn.Status()
	s.status.Store(&nodeapi.Status{ID: s.cfg.Name, Role: st.Role.String(), Term: st.Term, Leader: s.name(st.Lead),
		Commit: st.Commit, Applied: st.Applied, LastIndex: st.LastIndex, Abstaining: s.rn.Abstaining()})
	if old := s.conf.Load(); old == nil || !sameConf(*old, st.Conf) {
		s.conf.Store(&st.Conf)
	}
}

// Status returns the node's last published status, what GET /status
// answers.
func (s *Server) Status() nodeapi.Status { return *s.status.Load() }
