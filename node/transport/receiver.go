package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"chaos/internal/sleep"
	"chaos/raft"
)

// readBufferBytes is the size of each inbound connection's read buffer.
const readBufferBytes = 64 << 10

// acceptLoop accepts peer connections until the listener is closed and
// starts one reader goroutine for each. Accept errors other than closure
// (such as running out of file descriptors) are retried with backoff.
func (t *Transport) acceptLoop(ln net.Listener) {
	defer t.wg.Done()
	bo := newBackoff(5*time.Millisecond, time.Second, nil)
	for {
		conn, err := ln.Accept()
		if err != nil {
			if t.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			t.log.Warn("accept failed", "err", err)
			if sleep.For(t.ctx, bo.next()) != nil {
				return
			}
			continue
		}
		bo.reset()
		if err := t.inbound.add(conn); err != nil {
			if !errors.Is(err, errConnSetClosed) {
				t.log.Warn("refusing peer connection", "remote", conn.RemoteAddr().String(), "err", err)
				t.rejected.Add(1)
			}
			conn.Close()
			continue
		}
		t.wg.Add(1)
		go t.readConn(conn)
	}
}

// readConn is the reader goroutine of one inbound connection. It delivers
// frames until the peer closes, the connection idles out, or the input is
// bad, which closes the connection with a log line naming the remote
// address.
func (t *Transport) readConn(conn net.Conn) {
	defer t.wg.Done()
	defer t.inbound.remove(conn)
	remote := conn.RemoteAddr().String()
	br := bufio.NewReaderSize(conn, readBufferBytes)
	var from uint64 // the peer whose messages the connection carried
	for {
		// Between frames a connection may idle up to IdleTimeout (senders
		// write keepalives); once a frame begins it must finish in FrameTimeout.
		if err := conn.SetReadDeadline(time.Now().Add(t.cfg.IdleTimeout)); err != nil {
			t.endConn(remote, from, err)
			return
		}
		if _, err := br.Peek(1); err != nil {
			t.endConn(remote, from, err)
			return
		}
		if err := conn.SetReadDeadline(time.Now().Add(t.cfg.FrameTimeout)); err != nil {
			t.endConn(remote, from, err)
			return
		}
		msgs, err := ReadFrame(br, t.cfg.MaxFrameBytes)
		if err == nil {
			if len(msgs) > 0 {
				from = msgs[0].From // a connection carries one peer's messages
			}
			err = t.deliver(msgs)
		}
		if err != nil {
			t.rejectConn(remote, err)
			return
		}
	}
}

// endConn logs the end of an inbound connection between frames and, when
// the peer closed or reset it, tells Config.PeerLost.
func (t *Transport) endConn(remote string, from uint64, err error) {
	switch {
	case t.closed.Load():
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.log.Info("peer connection idle, closing", "remote", remote, "idle", t.cfg.IdleTimeout)
		return
	case errors.Is(err, io.EOF):
		t.log.Debug("peer connection closed by remote", "remote", remote)
	default:
		t.log.Info("peer connection failed", "remote", remote, "err", err)
	}
	if from != 0 && t.cfg.PeerLost != nil {
		t.cfg.PeerLost(from)
	}
}

// rejectConn logs and counts an inbound connection closed for bad input.
func (t *Transport) rejectConn(remote string, err error) {
	if t.closed.Load() {
		return
	}
	t.rejected.Add(1)
	t.log.Warn("closing peer connection: bad input", "remote", remote, "err", err)
}

// deliver checks that every message in a batch is addressed to this node by
// a member, discards those from peers under Drop, and passes the rest to
// the Handler.
func (t *Transport) deliver(msgs []raft.Message) error {
	peers := t.peerTable()
	for i := range msgs {
		if m := &msgs[i]; m.To != t.cfg.ID || peers[m.From] == nil {
			return fmt.Errorf("message %d of batch, %s %d->%d: not from a peer to node %d",
				i, m.Type, m.From, m.To, t.cfg.ID)
		}
	}
	ft := t.faults.Load()
	kept := msgs[:0]
	for _, m := range msgs {
		p := peers[m.From]
		if ft.forPeer(m.From).Drop {
			p.droppedIn.Add(1)
			continue
		}
		p.received.Add(1)
		kept = append(kept, m)
	}
	if len(kept) > 0 {
		t.cfg.Handler(kept)
	}
	return nil
}
