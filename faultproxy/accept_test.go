package faultproxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failingListener is a listener whose first accepts fail with errs, one
// each, before it accepts on the real listener it wraps.
type failingListener struct {
	net.Listener
	errs []error
}

func (l *failingListener) Accept() (net.Conn, error) {
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	return l.Listener.Accept()
}

// timeoutError is a net.Error that says it timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// servedProxy is a Proxy serving on a listener of the test's, its pauses
// recorded rather than slept and its log kept.
type servedProxy struct {
	p      *Proxy
	addr   string
	pauses []time.Duration // read only after stop
	log    bytes.Buffer    // read only after stop
	done   chan error
	cancel context.CancelFunc
}

// serveProxy serves p on ln (wrapped by wrap, when not nil), sending
// every connection to dst, until the test ends or stop is called.
func serveProxy(t *testing.T, p *Proxy, dst netip.AddrPort, wrap func(net.Listener) net.Listener) *servedProxy {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	sp := &servedProxy{p: p, addr: ln.Addr().String(), done: make(chan error, 1)}
	p.Links = &Table{}
	p.Log = slog.New(slog.NewTextHandler(&sp.log, nil))
	p.OriginalDst = func(*net.TCPConn) (netip.AddrPort, error) { return dst, nil }
	p.Dial = func(ctx context.Context, _ netip.Addr, to netip.AddrPort) (*net.TCPConn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp4", to.String())
		if err != nil {
			return nil, err
		}
		return c.(*net.TCPConn), nil
	}
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		sp.pauses = append(sp.pauses, d)
		return ctx.Err()
	}
	var l net.Listener = ln
	if wrap != nil {
		l = wrap(ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sp.cancel = cancel
	go func() { sp.done <- p.Serve(ctx, l) }()
	t.Cleanup(func() { sp.stop(t) })
	return sp
}

// stop ends Serve and checks that it ended without an error.
func (sp *servedProxy) stop(t *testing.T) {
	t.Helper()
	if sp.cancel == nil {
		return
	}
	sp.cancel()
	sp.cancel = nil
	require.NoError(t, <-sp.done)
}

// roundTrip sends msg on c and checks that the echo comes back.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
}

// A streak of failed accepts (a process out of file descriptors, and the
// other errors that clear by themselves) does not end the proxy: each is
// tried again after a pause that starts at 5 ms and doubles up to 1 s,
// the streak is logged once when it starts and once when it ends, and
// the connection accepted after it is forwarded.
func TestProxyKeepsServingThroughFailedAccepts(t *testing.T) {
	backend, _ := echoServer(t, "127.0.0.2:0")
	errs := []error{acceptErr(syscall.EMFILE), acceptErr(syscall.ENFILE), acceptErr(syscall.ENOBUFS),
		acceptErr(syscall.ENOMEM), acceptErr(syscall.ECONNABORTED), &net.OpError{Op: "accept", Net: "tcp", Err: timeoutError{}},
		acceptErr(syscall.EMFILE), acceptErr(syscall.EMFILE), acceptErr(syscall.EMFILE), acceptErr(syscall.EMFILE)}
	sp := serveProxy(t, &Proxy{}, backend, func(ln net.Listener) net.Listener {
		return &failingListener{Listener: ln, errs: errs}
	})
	c := dialTest(t, sp.addr)
	roundTrip(t, c, "still here")
	require.NoError(t, c.Close())
	sp.stop(t)

	ms := time.Millisecond
	assert.Equal(t, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second}, sp.pauses)
	log := sp.log.String()
	assert.Equal(t, 1, strings.Count(log, "accept failed"), log)
	assert.Contains(t, log, "too many open files")
	assert.Equal(t, 1, strings.Count(log, "accepting again"), log)
	assert.Contains(t, log, "failed_accepts=10")
}

// A listener closed under the proxy (not by ctx's end) ends Serve with
// its error, at once.
func TestProxyEndsWhenItsListenerCloses(t *testing.T) {
	p := &Proxy{Sleep: func(context.Context, time.Duration) error {
		t.Error("a closed listener is not tried again")
		return nil
	}}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	err = p.Serve(context.Background(), ln)
	require.ErrorIs(t, err, net.ErrClosed)
	assert.ErrorContains(t, err, "fault proxy: accept: ")
}

// refused dials addr, sends, and checks that the proxy closed the
// connection unanswered. The reset may come before the dial has seen its
// connection established: then the dial itself fails with it.
func refused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
	if err != nil {
		require.ErrorIs(t, err, syscall.ECONNRESET)
		return
	}
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	_, _ = c.Write([]byte("x")) // may fail already: the proxy reset it
	n, err := c.Read(make([]byte, 1))
	require.Error(t, err, "the connection past the cap was answered")
	require.Zero(t, n)
}

// Past MaxConns a connection is closed at once and counted; those under
// the cap go on, and once one of them closes a new one is forwarded.
func TestProxyRefusesPastItsConnectionCap(t *testing.T) {
	backend, _ := echoServer(t, "127.0.0.2:0")
	sp := serveProxy(t, &Proxy{MaxConns: 2}, backend, nil)
	c1, c2 := dialTest(t, sp.addr), dialTest(t, sp.addr)
	roundTrip(t, c1, "one")
	roundTrip(t, c2, "two") // both accepted, each holding its place under the cap

	refused(t, sp.addr)
	refused(t, sp.addr)
	assert.Equal(t, Conns{Open: 2, Max: 2, Refused: 2}, sp.p.Conns())
	roundTrip(t, c1, "one again")
	roundTrip(t, c2, "two again")

	require.NoError(t, c1.Close())
	require.Eventually(t, func() bool { return sp.p.Conns().Open == 1 }, 10*time.Second, time.Millisecond,
		"c1's forwarding ends once its close has gone through")
	roundTrip(t, dialTest(t, sp.addr), "three")
	assert.Equal(t, Conns{Open: 2, Max: 2, Refused: 2}, sp.p.Conns())
	sp.stop(t)

	log := sp.log.String()
	assert.Equal(t, 1, strings.Count(log, "at the connection cap"), log)
	assert.Equal(t, 1, strings.Count(log, "under the connection cap again"), log)
	assert.Contains(t, log, "refused=2")
}

// A Proxy refuses a cap out of bounds; 0 is DefaultMaxConns.
func TestProxyMaxConnsBounds(t *testing.T) {
	for _, n := range []int{-1, MaxConnsLimit + 1} {
		err := (&Proxy{MaxConns: n}).Serve(context.Background(), &failingListener{})
		assert.ErrorContains(t, err, "connections at once is outside [1, 4096]")
	}
	assert.Equal(t, Conns{Max: DefaultMaxConns}, (&Proxy{}).Conns())
	assert.LessOrEqual(t, DefaultMaxConns*connBufferMax, 2100<<20, "the default cap's buffers stay near 2 GiB")
}

// A listener closed under Serve while a connection is forwarded: Serve
// ends that connection and returns, instead of waiting for it to end by
// itself.
func TestProxyClosedUnderServeEndsItsConnections(t *testing.T) {
	backend, _ := echoServer(t, "127.0.0.2:0")
	var ln net.Listener
	sp := serveProxy(t, &Proxy{}, backend, func(l net.Listener) net.Listener { ln = l; return l })
	c := dialTest(t, sp.addr)
	roundTrip(t, c, "open")
	require.NoError(t, ln.Close())
	select {
	case err := <-sp.done:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10 s of its listener closing, with a connection open")
	}
	sp.cancel()
	sp.cancel = nil
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := c.Read(make([]byte, 1))
	require.Error(t, err, "the forwarded connection was left open")
}
