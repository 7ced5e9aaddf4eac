package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"chaos/raft"
)

// Transport sends raft messages to the configured peers and delivers the
// messages it receives to Config.Handler. Its methods are safe for
// concurrent use. The lifecycle is New, Start, then Close; Send may be
// called at any time and drops messages after Close.
type Transport struct {
	cfg    Config
	log    *slog.Logger
	seeded bool // Config.Rand was given: random faults allowed

	// peers is the current peer table, replaced whole (never modified) by
	// AddPeer and RemovePeer under peersMu, and read without locking.
	peers   atomic.Pointer[map[uint64]*peer]
	peersMu sync.Mutex

	faultsMu sync.Mutex                 // serializes fault updates
	faults   atomic.Pointer[faultTable] // the current, immutable table

	inbound, outbound *connSet
	unroutable        atomic.Uint64
	rejected          atomic.Uint64

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept, reader and sender goroutines
	closed atomic.Bool

	mu      sync.Mutex // guards started and ln
	started bool
	ln      net.Listener
}

// New validates cfg and returns a Transport that is not yet listening.
func New(cfg Config) (*Transport, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{
		cfg:      cfg,
		log:      cfg.Logger.With("node", cfg.ID, "component", "transport"),
		seeded:   cfg.Rand != nil,
		inbound:  newConnSet(cfg.MaxInbound),
		outbound: newConnSet(0),
		ctx:      ctx,
		cancel:   cancel,
	}
	t.faults.Store(&faultTable{})
	ids := make([]uint64, 0, len(cfg.Peers))
	for id := range cfg.Peers {
		if id != cfg.ID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // seeds are drawn in id order, so a seed replays
	peers := make(map[uint64]*peer, len(ids))
	for _, id := range ids {
		peers[id] = newPeer(t, id, cfg.Peers[id], t.peerRand(), t.peerRand())
	}
	t.peers.Store(&peers)
	return t, nil
}

// peerTable is the current peer table; callers must not modify it.
func (t *Transport) peerTable() map[uint64]*peer { return *t.peers.Load() }

// AddPeer makes id, at addr, a peer from now on (a member joined): messages
// to it are sent and messages from it delivered. Adding a peer that exists
// at the same address does nothing; at another address it is an error
// (remove it first).
func (t *Transport) AddPeer(id uint64, addr string) error {
	t.peersMu.Lock()
	defer t.peersMu.Unlock()
	old := t.peerTable()
	switch p := old[id]; {
	case id == t.cfg.ID || id == 0:
		return fmt.Errorf("transport: add peer %d: not a peer ID", id)
	case addr == "":
		return fmt.Errorf("transport: add peer %d: empty address", id)
	case p != nil && p.addr == addr:
		return nil
	case p != nil:
		return fmt.Errorf("transport: add peer %d at %s: it is a peer at %s already", id, addr, p.addr)
	}
	p := newPeer(t, id, addr, t.peerRand(), t.peerRand())
	peers := maps.Clone(old)
	peers[id] = p
	t.peers.Store(&peers)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started && !t.closed.Load() {
		t.startPeer(p)
	}
	t.log.Info("peer added", "peer", id, "addr", addr)
	return nil
}

// RemovePeer stops sending to id and delivering its messages (a member
// left), closing its connection. Removing an unknown peer does nothing.
func (t *Transport) RemovePeer(id uint64) {
	t.peersMu.Lock()
	defer t.peersMu.Unlock()
	old := t.peerTable()
	p := old[id]
	if p == nil {
		return
	}
	peers := maps.Clone(old)
	delete(peers, id)
	t.peers.Store(&peers)
	if p.stop != nil {
		p.stop()
	}
	t.log.Info("peer removed", "peer", id)
}

// startPeer starts p's sender goroutine; t.mu is held.
func (t *Transport) startPeer(p *peer) {
	ctx, stop := context.WithCancel(t.ctx)
	p.stop = stop
	t.wg.Add(1)
	go p.run(ctx)
}

// peerRand returns a random source for one peer, seeded from Config.Rand
// when there is one.
func (t *Transport) peerRand() *rand.Rand {
	if t.cfg.Rand != nil {
		return rand.New(rand.NewPCG(t.cfg.Rand.Uint64(), t.cfg.Rand.Uint64()))
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// Start listens for peers and starts one sender goroutine per peer. It may
// be called once, and not after Close.
func (t *Transport) Start() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || t.closed.Load() {
		return errors.New("transport: start: already started or closed")
	}
	ln := t.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", t.cfg.Listen); err != nil {
			return fmt.Errorf("transport: listen on %s: %w", t.cfg.Listen, err)
		}
	}
	t.started, t.ln = true, ln
	t.log.Info("listening", "addr", ln.Addr().String())
	t.wg.Add(1)
	go t.acceptLoop(ln)
	t.peersMu.Lock() // no peer is added or removed half started
	defer t.peersMu.Unlock()
	for _, p := range t.peerTable() {
		t.startPeer(p)
	}
	return nil
}

// Addr is the address the transport listens on, or nil before Start.
func (t *Transport) Addr() net.Addr {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ln == nil {
		return nil
	}
	return t.ln.Addr()
}

// Send queues msgs for their recipients (msg.To) and returns without
// waiting for the network. Messages to ids that are not peers, to a peer
// under Drop, or beyond a full queue are dropped and counted. The messages
// are copied, but their Entries and Snapshot are shared until written: the
// caller must not modify them after Send.
func (t *Transport) Send(msgs []raft.Message) {
	if t.closed.Load() {
		return
	}
	ft := t.faults.Load()
	peers := t.peerTable()
	for i := range msgs {
		p := peers[msgs[i].To]
		switch {
		case p == nil:
			t.unroutable.Add(1)
		case ft.forPeer(p.id).Drop || !p.queue.push(msgs[i]):
			p.dropped.Add(1)
		}
		// Wake a sender once per run of messages to it, after the run is
		// queued, so that a run usually leaves as one frame.
		if p != nil && (i+1 == len(msgs) || msgs[i+1].To != p.id) {
			p.queue.wake()
		}
	}
}

// Close stops the transport: it stops listening, closes every connection,
// and returns once every goroutine it started has exited. Messages still
// queued or delayed are discarded. Later calls return nil.
func (t *Transport) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	t.cancel()
	t.mu.Lock()
	ln := t.ln
	if ln == nil {
		ln = t.cfg.Listener
	}
	t.mu.Unlock()
	var err error
	if ln != nil {
		if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("transport: close listener: %w", cerr)
		}
	}
	t.inbound.closeAll()
	t.outbound.closeAll()
	t.wg.Wait()
	t.log.Info("closed")
	return err
}

// now is the fault pipeline's clock.
func (t *Transport) now() time.Time { return t.cfg.Clock() }
