package faultproxy

import (
	"errors"
	"io"
	"net"
	"time"
)

// Bounds of one direction of a proxied connection.
const (
	// chunkMax is the most one read takes from the source.
	chunkMax = 16 << 10
	// queueMax is how many pieces wait for their release at most: with
	// chunks of chunkMax, 4 MiB (as much as Linux lets a sender's socket
	// buffer grow by default, tcp_wmem). A full queue stops the reads, and
	// TCP's flow control slows the sender, as a full router queue would;
	// so a delay d lets a connection carry at most 4 MiB/d each way
	// (about 50 MiB/s under 75 ms).
	queueMax = 256
)

// connBufferMax bounds what one proxied connection holds in buffers: per
// direction a full queue, the piece being released, the chunk being
// queued and the read buffer (about 8 MiB in all).
const connBufferMax = 2 * (queueMax + 3) * chunkMax

// halfCloser is a connection whose write side can be closed alone
// (*net.TCPConn).
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// pipe copies one direction of a proxied connection, from src to dst,
// shaped by a Shaper with the behavior look returns when each chunk
// arrives.
type pipe struct {
	src  net.Conn
	dst  halfCloser
	look func() Behavior
	sh   *Shaper
	now  func() time.Time
	// done is closed when the connection is torn down: a release waiting
	// for its time gives up.
	done <-chan struct{}
}

// piece is bytes to write at a time, or the end of the source: io.EOF
// after its last byte (the write side of dst is then closed), another
// error when it failed.
type piece struct {
	data []byte
	at   time.Time
	err  error
}

// run copies until the source ends and every byte is written (nil), or
// something fails: the source, dst, or the teardown (done). It returns
// once its reader has stopped too, or will at the teardown.
func (p *pipe) run() error {
	queue := make(chan piece, queueMax)
	go p.read(queue)
	for pc := range queue {
		if pc.err != nil {
			if errors.Is(pc.err, io.EOF) {
				return p.dst.CloseWrite()
			}
			return pc.err
		}
		if err := p.release(pc); err != nil {
			return err
		}
	}
	return nil
}

// read reads src into the queue until it ends, then queues the end and
// closes the queue. It stops early at the teardown.
func (p *pipe) read(queue chan<- piece) {
	defer close(queue)
	buf := make([]byte, chunkMax)
	for {
		n, err := p.src.Read(buf)
		if n > 0 {
			data := make([]byte, n)
			copy(data, buf[:n])
			for _, pc := range p.sh.Schedule(p.now(), n, p.look()) {
				if !p.put(queue, piece{data: data[:pc.N], at: pc.At}) {
					return
				}
				data = data[pc.N:]
			}
		}
		if err != nil {
			p.put(queue, piece{err: err})
			return
		}
	}
}

// put queues pc, and reports false when the teardown came first.
func (p *pipe) put(queue chan<- piece, pc piece) bool {
	select {
	case queue <- pc:
		return true
	case <-p.done:
		return false
	}
}

// release waits until pc's time and writes it to dst.
func (p *pipe) release(pc piece) error {
	if wait := pc.at.Sub(p.now()); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-p.done:
			return net.ErrClosed
		}
	}
	_, err := p.dst.Write(pc.data)
	return err
}
