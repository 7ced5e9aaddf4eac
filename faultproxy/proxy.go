package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"chaos/internal/sleep"
)

// Mark is the socket mark (SO_MARK) of the proxy's own connections: the
// REDIRECT rules skip packets that carry it, so that the proxy's
// connection toward a peer is not sent back to the proxy.
const Mark = 0xc4a5

// DefaultMaxConns is how many connections a Proxy forwards at once when
// its MaxConns is 0: a host's nodes open a few each toward their peers,
// and their clients a few more, so this is room to spare. At
// connBufferMax (about 8 MiB) each it bounds the buffers at about 2 GiB,
// a worst case that needs every connection's senders to outrun their
// links both ways at once.
const DefaultMaxConns = 256

// MaxConnsLimit bounds MaxConns: each proxied connection holds two file
// descriptors and up to connBufferMax of buffers.
const MaxConnsLimit = 4096

// Proxy forwards the connections redirected to its listener toward where
// they were going, shaped by Links. Its invariants while Serve runs:
//
//   - at most MaxConns connections are forwarded at once; one accepted
//     past the cap is closed at once (a reset, to its opener) and counted
//     in Conns().Refused;
//   - only a closed listener (or ctx's end) ends Serve: any other failed
//     accept (EMFILE, ENFILE, ENOBUFS, ENOMEM, ECONNABORTED, a timeout, a
//     network error Linux passes on from a pending connection, or one
//     not known here) is tried again after a pause of 5 ms, doubled
//     after each further failure up to 1 s, with one log line when a
//     streak of failures starts and one when it ends. A proxy that exits
//     leaves REDIRECT rules pointing at a dead port, which turns a delay
//     into connection refused; an error that never clears costs one try
//     a second.
//
// A Proxy serves one listener once; do not copy it.
type Proxy struct {
	// Links are the degraded links; connections on other links pass
	// through as they come.
	Links *Table
	// OriginalDst says where an accepted connection was going before
	// REDIRECT sent it here (OriginalDst, in production).
	OriginalDst func(*net.TCPConn) (netip.AddrPort, error)
	// Dial opens the proxy's own connection from the address from (the
	// connection's source, so that the peer's packet filter sees the node
	// it knows) to to (DialMarked with Mark, in production).
	Dial func(ctx context.Context, from netip.Addr, to netip.AddrPort) (*net.TCPConn, error)
	// Log records each connection and why it ended.
	Log *slog.Logger
	// Now is the clock of the shaping (time.Now when nil).
	Now func() time.Time
	// MaxConns caps the connections forwarded at once, in [1,
	// MaxConnsLimit]; 0 is DefaultMaxConns.
	MaxConns int
	// Sleep waits d, or until ctx ends (then it returns ctx's error): the
	// pause after a failed accept (sleep.For when nil).
	Sleep func(ctx context.Context, d time.Duration) error

	open    atomic.Int64  // connections being forwarded
	refused atomic.Uint64 // connections closed at the cap, ever
}

// Conns is what a Proxy says of its connections (Status.Conns).
type Conns struct {
	// Open is how many are being forwarded, Max how many may be at once.
	Open int `json:"open"`
	Max  int `json:"max"`
	// Refused is how many were closed at once for want of room under Max
	// since the proxy started.
	Refused uint64 `json:"refused"`
}

// Conns returns the proxy's connection counts; safe while Serve runs.
func (p *Proxy) Conns() Conns {
	limit, _ := p.maxConns()
	return Conns{Open: int(p.open.Load()), Max: limit, Refused: p.refused.Load()}
}

// maxConns is MaxConns, DefaultMaxConns for 0; an error when it is out of
// bounds.
func (p *Proxy) maxConns() (int, error) {
	switch {
	case p.MaxConns == 0:
		return DefaultMaxConns, nil
	case p.MaxConns < 0 || p.MaxConns > MaxConnsLimit:
		return p.MaxConns, fmt.Errorf("fault proxy: at most %d connections at once is outside [1, %d]", p.MaxConns, MaxConnsLimit)
	}
	return p.MaxConns, nil
}

// dialTimeout bounds the proxy's dial toward a connection's destination.
const dialTimeout = 10 * time.Second

// Serve accepts connections on ln and forwards each until ctx ends; then
// it closes ln and every connection and returns once they are gone. Its
// error says MaxConns is out of bounds, or that ln was closed under it;
// nil after ctx ended. See Proxy for what it does on a failed accept and
// at the cap.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	limit, err := p.maxConns()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// However Serve returns (ctx ended, or ln closed under it), the
	// connections are told to end before they are waited for.
	defer func() {
		cancel()
		wg.Wait()
	}()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var failures acceptFailures
	var atCap capRefusals
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("fault proxy: accept: %w", err)
			}
			if p.sleep(ctx, failures.failed(p.log(), err)) != nil {
				return nil
			}
			continue
		}
		failures.ended(p.log())
		// Only this loop adds to open, so a count under the limit here
		// stays under it until the Add below: open is the cap's own count,
		// and a forwarding that ended makes room the moment Conns shows it.
		if p.open.Load() >= int64(limit) {
			p.refused.Add(1)
			atCap.refused(p.log(), c, limit)
			continue
		}
		atCap.ended(p.log())
		p.open.Add(1)
		wg.Go(func() {
			defer p.open.Add(-1)
			p.serveConn(ctx, c)
		})
	}
}

// serveConn forwards c if it is a TCP connection, and closes it.
func (p *Proxy) serveConn(ctx context.Context, c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		_ = c.Close()
		return
	}
	p.handle(ctx, tc)
}

// sleep is Sleep, or sleep.For when it is nil.
func (p *Proxy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep == nil {
		return sleep.For(ctx, d)
	}
	return p.Sleep(ctx, d)
}

// handle forwards one accepted connection and logs how it ended.
func (p *Proxy) handle(ctx context.Context, in *net.TCPConn) {
	defer in.Close()
	src, dst, err := p.ends(in)
	if err != nil {
		p.log().Warn("refused", "from", in.RemoteAddr().String(), "err", err)
		return
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	out, err := p.Dial(dctx, src.Addr(), dst)
	cancel()
	if err != nil {
		p.log().Warn("dial", "from", src.String(), "to", dst.String(), "err", err)
		return
	}
	defer out.Close()
	p.log().Info("forward", "from", src.String(), "to", dst.String())
	err = p.forward(ctx, in, out, src.Addr(), dst.Addr())
	p.log().Info("closed", "from", src.String(), "to", dst.String(), "err", err)
}

// ends are where an accepted connection comes from and where it was
// going. A connection that was not redirected (its destination is the
// proxy itself) is refused: forwarding it would loop.
func (p *Proxy) ends(in *net.TCPConn) (src, dst netip.AddrPort, err error) {
	src = in.RemoteAddr().(*net.TCPAddr).AddrPort()
	dst, err = p.OriginalDst(in)
	if err != nil {
		return src, dst, fmt.Errorf("original destination: %w", err)
	}
	src, dst = netip.AddrPortFrom(src.Addr().Unmap(), src.Port()), netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	if dst == in.LocalAddr().(*net.TCPAddr).AddrPort() {
		return src, dst, fmt.Errorf("connection to %v was not redirected here", dst)
	}
	return src, dst, nil
}

// forward runs both directions of a connection: in -> out shaped by the
// link from -> to, out -> in by the link to -> from. It returns once both
// ended: each after its source's end was passed on, or both at once when
// one fails or ctx ends.
func (p *Proxy) forward(ctx context.Context, in, out *net.TCPConn, from, to netip.Addr) error {
	done := make(chan struct{})
	var once sync.Once
	teardown := func() { once.Do(func() { close(done); _ = in.Close(); _ = out.Close() }) }
	stop := context.AfterFunc(ctx, teardown)
	defer stop()
	now := p.Now
	if now == nil {
		now = time.Now
	}
	dirs := []*pipe{
		{src: in, dst: out, look: func() Behavior { return p.Links.Lookup(from, to) }},
		{src: out, dst: in, look: func() Behavior { return p.Links.Lookup(to, from) }},
	}
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, d := range dirs {
		d.sh, d.now, d.done = NewShaper(rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))), now, done
		wg.Go(func() {
			if errs[i] = d.run(); errs[i] != nil {
				teardown()
			}
		})
	}
	wg.Wait()
	teardown()
	for i, err := range errs {
		if errors.Is(err, net.ErrClosed) {
			errs[i] = nil // the teardown's doing, not a cause
		}
	}
	return errors.Join(errs...)
}

// log is Log, or a logger that discards when Log is nil.
func (p *Proxy) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}
