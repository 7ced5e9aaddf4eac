package transport

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"chaos/internal/sleep"
	"chaos/raft"
)

// maxKeptScratchBytes bounds the encoding buffer a sender keeps between
// batches, so one large snapshot does not pin its size forever.
const maxKeptScratchBytes = 4 << 20

// peer is one remote member: its queue and counters, shared with Send and
// the readers, and the state of its sender goroutine.
type peer struct {
	t     *Transport
	id    uint64
	addr  string
	log   *slog.Logger
	queue *queue
	counters
	// stop ends the sender goroutine (RemovePeer); set when it starts,
	// under Transport.peersMu.
	stop context.CancelFunc

	// Owned by the sender goroutine (run).
	shaper  *shaper
	backoff backoff
	conn    net.Conn
	scratch []byte         // frame encoding buffer
	taken   []raft.Message // the queue's other buffer
	wrote   bool           // something was written since the last tick
	failing bool           // the last dial failed (and was logged)
}

// newPeer makes a peer whose fault decisions draw from faultRng and whose
// backoff jitter draws from backoffRng, so that connection failures do not
// shift the sequence of fault decisions a seed produces.
func newPeer(t *Transport, id uint64, addr string, faultRng, backoffRng *rand.Rand) *peer {
	return &peer{
		t:       t,
		id:      id,
		addr:    addr,
		log:     t.log.With("peer", id, "addr", addr),
		queue:   newQueue(t.cfg.QueueLen),
		shaper:  newShaper(faultRng, t.cfg.QueueLen),
		backoff: newBackoff(t.cfg.BackoffMin, t.cfg.BackoffMax, backoffRng),
	}
}

// run is the peer's sender goroutine. Each wake-up (queued messages, a
// delayed message falling due, or the keepalive tick) moves everything
// waiting through the fault pipeline and writes what is due as one frame.
func (p *peer) run(ctx context.Context) {
	defer p.t.wg.Done()
	defer p.disconnect()
	tick := time.NewTicker(p.t.cfg.KeepAlive)
	defer tick.Stop()
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	for {
		ticked := false
		select {
		case <-ctx.Done():
			return
		case <-p.queue.ready:
		case <-wake.C:
		case <-tick.C:
			ticked = true
		}
		p.step(ctx, ticked)
		if due, ok := p.shaper.next(); ok {
			wake.Reset(due.Sub(p.t.now()))
		}
	}
}

// step admits the queued messages to the fault pipeline and writes the
// batch that is due, or a keepalive on a tick with nothing written since
// the previous one.
func (p *peer) step(ctx context.Context, ticked bool) {
	f := p.t.faults.Load().forPeer(p.id)
	now := p.t.now()
	queued := p.queue.swap(p.taken)
	if n := p.shaper.admit(queued, f, now); n > 0 {
		p.dropped.Add(uint64(n))
	}
	clear(queued)
	p.taken = queued[:0]

	batch := p.shaper.take(f, now)
	if f.Drop {
		p.dropped.Add(uint64(len(batch)))
		batch = nil
	}
	keepalive := ticked && !p.wrote && p.conn != nil
	if ticked {
		p.wrote = false
	}
	if len(batch) > 0 || keepalive {
		p.write(ctx, batch)
	}
}

// write sends batch, dialing first if there is no connection, in as few
// frames as MaxFrameBytes allows; an empty batch is one keepalive frame. On
// failure the unsent messages are dropped and the goroutine waits out the
// backoff before returning.
func (p *peer) write(ctx context.Context, batch []raft.Message) {
	if p.conn == nil && !p.dial(ctx) {
		p.dropped.Add(uint64(len(batch)))
		p.pause(ctx)
		return
	}
	if len(batch) == 0 {
		p.flush(ctx, nil, 0)
		return
	}
	for len(batch) > 0 {
		n := splitBatch(batch, p.t.cfg.MaxFrameBytes)
		if n == 0 {
			p.log.Error("dropping message larger than a frame",
				"msg", batch[0].String(), "bytes", MessageSize(&batch[0]), "limit", p.t.cfg.MaxFrameBytes)
			p.dropped.Add(1)
			batch = batch[1:]
			continue
		}
		if !p.flush(ctx, batch[:n], len(batch)) {
			return
		}
		batch = batch[n:]
	}
}

// flush writes msgs as one frame. On failure it counts unsent messages as
// dropped, closes the connection and waits out the backoff.
func (p *peer) flush(ctx context.Context, msgs []raft.Message, unsent int) bool {
	if err := p.writeFrame(msgs); err != nil {
		level := slog.LevelWarn
		if ctx.Err() != nil { // Close closed the connection under us
			level = slog.LevelDebug
		}
		p.log.Log(ctx, level, "write failed, reconnecting", "err", err, "dropped", unsent)
		p.dropped.Add(uint64(unsent))
		p.disconnect()
		p.pause(ctx)
		return false
	}
	p.sent.Add(uint64(len(msgs)))
	p.wrote = true
	p.backoff.reset()
	return true
}

func (p *peer) writeFrame(msgs []raft.Message) error {
	if err := p.conn.SetWriteDeadline(time.Now().Add(p.t.cfg.WriteTimeout)); err != nil {
		return err
	}
	var err error
	p.scratch, err = WriteFrame(p.conn, msgs, p.scratch)
	if cap(p.scratch) > maxKeptScratchBytes {
		p.scratch = nil
	}
	return err
}

// dial opens the outbound connection from Config.LocalIP. A failure is
// logged at Warn once per run of failures, then at Debug.
func (p *peer) dial(ctx context.Context) bool {
	d := net.Dialer{Timeout: p.t.cfg.DialTimeout}
	if p.t.cfg.LocalIP != nil {
		d.LocalAddr = &net.TCPAddr{IP: p.t.cfg.LocalIP}
	}
	conn, err := d.DialContext(ctx, "tcp", p.addr)
	if err == nil {
		if err = p.t.outbound.add(conn); err != nil {
			conn.Close()
		}
	}
	if err != nil {
		level := slog.LevelWarn
		if p.failing || ctx.Err() != nil {
			level = slog.LevelDebug
		}
		p.log.Log(ctx, level, "dial failed", "err", err)
		p.failing = true
		return false
	}
	p.log.Info("connected", "local", conn.LocalAddr().String())
	p.conn, p.failing = conn, false
	p.connects.Add(1)
	p.connected.Store(true)
	return true
}

// disconnect closes the outbound connection, if any.
func (p *peer) disconnect() {
	if p.conn == nil {
		return
	}
	p.t.outbound.remove(p.conn)
	p.conn = nil
	p.connected.Store(false)
}

// pause waits out the next backoff interval, or until ctx is done.
func (p *peer) pause(ctx context.Context) { _ = sleep.For(ctx, p.backoff.next()) }
