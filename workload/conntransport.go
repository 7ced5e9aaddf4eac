package workload

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// ConnTransport is the http.RoundTripper of a workload client: each
// request runs on the caller's goroutine over a kept-alive connection of
// the transport's own (the request written, then its response read), with
// none of http.Transport's two goroutines per connection and the hand-offs
// between them, which on a loaded machine cost a closed-loop client more
// CPU than its request. net/http still writes the requests and parses the
// responses.
//
// What the clients rely on, as with http.Transport:
//   - A request is sent at most once, never resent. A pooled connection
//     the server closed while it was idle is found before anything is
//     written on it (a non-blocking peek) and replaced by a new one.
//   - A failure to connect is the dialer's *net.OpError (Op "dial"): the
//     request was not sent (see dialFailed).
//   - The request's context bounds the whole exchange: its deadline is the
//     connection's, and its end interrupts a blocked write or read, whose
//     error is then the context's.
//
// It speaks HTTP/1.1 to plain http URLs, with no proxy and no compression;
// https URLs go through an http.Transport of its own (TLS is not where a
// load generator's CPU goes). Redirects are the http.Client's to follow or
// not. Its methods are safe for concurrent use: requests in flight at once
// get a connection each, and up to MaxIdle of them are kept for the next.
type ConnTransport struct {
	// Dial opens a connection; nil means a net.Dialer's DialContext.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdle bounds the connections kept between requests; 0 means 1.
	MaxIdle int
	// TLS configures https connections; nil means the system's roots.
	TLS *tls.Config

	mu   sync.Mutex
	idle []*clientConn
	tls  *http.Transport // made at the first https request
}

// clientConn is one kept-alive connection to addr.
type clientConn struct {
	addr string
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
}

// RoundTrip sends req on a connection of t's and returns the response;
// closing the response's body hands the connection back (or closes it
// when the body was not read to its end or the exchange went wrong).
func (t *ConnTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.URL.Scheme {
	case "https":
		return t.tlsTransport().RoundTrip(req)
	case "http":
	default:
		closeBody(req)
		return nil, fmt.Errorf("unsupported scheme %q: want http or https", req.URL.Scheme)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err // nothing sent, as http.Transport does
	}
	cc, err := t.conn(ctx, hostPort(req))
	if err != nil {
		closeBody(req)
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	if err := cc.conn.SetDeadline(deadline); err != nil {
		closeBody(req)
		cc.conn.Close()
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = cc.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		cc.conn.Close()
		return nil, contextCause(ctx, deadline, err)
	}
	if err := req.Write(cc.bw); err != nil {
		return fail(err)
	}
	if err := cc.bw.Flush(); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(cc.br, req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &connBody{ReadCloser: resp.Body, t: t, cc: cc, ctx: ctx, deadline: deadline, stop: stop,
		keep: !resp.Close, eof: resp.Body == http.NoBody}
	return resp, nil
}

// tlsTransport is the http.Transport of https requests.
func (t *ConnTransport) tlsTransport() *http.Transport {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tls == nil {
		t.tls = &http.Transport{DialContext: t.Dial, TLSClientConfig: t.TLS, MaxIdleConnsPerHost: max(t.MaxIdle, 1),
			DisableCompression: true}
	}
	return t.tls
}

// contextCause is the error of an exchange that failed with err: the
// context's, as with http.Transport, when the context ended or its
// deadline (the connection's, which can pass a moment before the
// context's own timer fires) has passed.
func contextCause(ctx context.Context, deadline time.Time, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && !deadline.IsZero() && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	return err
}

// hostPort is the address req goes to, with port 80 if the URL has none.
func hostPort(req *http.Request) string {
	if req.URL.Port() != "" {
		return req.URL.Host
	}
	return net.JoinHostPort(req.URL.Hostname(), "80")
}

// closeBody closes req's body, as a RoundTripper must even on failure.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// conn returns an idle connection to addr that the server has not closed,
// or a new one.
func (t *ConnTransport) conn(ctx context.Context, addr string) (*clientConn, error) {
	for {
		cc := t.takeIdle(addr)
		if cc == nil {
			break
		}
		if idleAlive(cc) {
			return cc, nil
		}
		cc.conn.Close()
	}
	dial := t.Dial
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &clientConn{addr: addr, conn: c, br: bufio.NewReader(c), bw: bufio.NewWriter(c)}, nil
}

// takeIdle removes and returns the most recently used idle connection to
// addr, or nil.
func (t *ConnTransport) takeIdle(addr string) *clientConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.idle) - 1; i >= 0; i-- {
		if cc := t.idle[i]; cc.addr == addr {
			t.idle = append(t.idle[:i], t.idle[i+1:]...)
			return cc
		}
	}
	return nil
}

// putIdle keeps cc for the next request, or closes it when MaxIdle
// connections are kept already.
func (t *ConnTransport) putIdle(cc *clientConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The last request's deadline must not turn the next peek into a timeout.
	if len(t.idle) >= max(t.MaxIdle, 1) || cc.conn.SetDeadline(time.Time{}) != nil {
		cc.conn.Close()
		return
	}
	t.idle = append(t.idle, cc)
}

// CloseIdleConnections closes the connections kept between requests.
func (t *ConnTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle, tlsTransport := t.idle, t.tls
	t.idle = nil
	t.mu.Unlock()
	for _, cc := range idle {
		cc.conn.Close()
	}
	if tlsTransport != nil {
		tlsTransport.CloseIdleConnections()
	}
}

// idleAlive reports whether an idle connection can carry a request: the
// server has neither closed it nor sent anything unasked, as a peek that
// does not wait shows. A connection that cannot be peeked at counts as
// alive.
func idleAlive(cc *clientConn) bool {
	if cc.br.Buffered() > 0 {
		return false
	}
	sc, ok := cc.conn.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	var peekErr error
	var b [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, peekErr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	})
	return err == nil && n < 0 && errors.Is(peekErr, syscall.EAGAIN)
}

// connBody is a response body that hands its connection back on Close if
// the response was read to its end and the exchange can go on.
type connBody struct {
	io.ReadCloser
	t        *ConnTransport
	cc       *clientConn
	ctx      context.Context
	deadline time.Time
	stop     func() bool
	keep     bool // the server did not ask to close the connection
	eof      bool
	done     bool
}

// Read reads the body; an error the context's end caused is the context's.
func (b *connBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
		return n, err
	}
	if err != nil {
		err = contextCause(b.ctx, b.deadline, err)
	}
	return n, err
}

// Close closes the body, and keeps the connection only when the body was
// read to its end, the server keeps it open and the request's context did
// not end (its end may have moved the deadline). A body not read to its
// end closes the connection first, so that closing the body does not wait
// for the rest of it.
func (b *connBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	if !b.eof {
		b.stop()
		b.cc.conn.Close()
		b.ReadCloser.Close()
		return nil
	}
	err := b.ReadCloser.Close()
	if b.stop() && b.keep && err == nil {
		b.t.putIdle(b.cc)
	} else {
		b.cc.conn.Close()
	}
	return err
}
