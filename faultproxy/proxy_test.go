package faultproxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests forward real connections on loopback through a Proxy whose
// OriginalDst is told where each connection goes (no iptables here; see
// netns_test.go for the real REDIRECT). Times are measured: each asserts
// a lower bound (the shaping happened) and a generous upper one (nothing
// stalled), so that a loaded machine does not make them fail.

var loopback = netip.MustParseAddr("127.0.0.1")

// testProxy runs a proxy on loopback until the test ends, sending every
// connection to dst, and returns its address.
func testProxy(t *testing.T, links *Table, dst netip.AddrPort) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	p := &Proxy{Links: links,
		OriginalDst: func(*net.TCPConn) (netip.AddrPort, error) { return dst, nil },
		Dial: func(ctx context.Context, from netip.Addr, to netip.AddrPort) (*net.TCPConn, error) {
			d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))}
			c, err := d.DialContext(ctx, "tcp4", to.String())
			if err != nil {
				return nil, err
			}
			return c.(*net.TCPConn), nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln.Addr().String()
}

// echoServer listens on addr (port 0: any) and echoes every connection
// until the test ends; it reports on arrivals when each chunk came.
func echoServer(t *testing.T, addr string) (netip.AddrPort, <-chan time.Time) {
	t.Helper()
	ln, err := net.Listen("tcp4", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	arrivals := make(chan time.Time, 1024)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						select {
						case arrivals <- time.Now():
						default:
						}
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).AddrPort(), arrivals
}

func dialTest(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	return c
}

// Bytes toward the peer wait the link's delay, and the answer the
// reverse link's.
func TestProxyDelaysEachDirection(t *testing.T) {
	backend, arrivals := echoServer(t, "127.0.0.2:0")
	links := &Table{}
	require.NoError(t, links.Set("n1", []Link{
		{From: loopback, To: backend.Addr(), Behavior: Behavior{DelayMS: 150}},
		{From: backend.Addr(), To: loopback, Behavior: Behavior{DelayMS: 100}},
	}))
	c := dialTest(t, testProxy(t, links, backend))

	sent := time.Now()
	_, err := c.Write([]byte("ping"))
	require.NoError(t, err)
	got := make([]byte, 4)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	back := time.Now()
	require.Equal(t, "ping", string(got))
	arrived := <-arrivals

	out, total := arrived.Sub(sent), back.Sub(sent)
	t.Logf("out %v, round trip %v", out, total)
	assert.GreaterOrEqual(t, out, 150*time.Millisecond)
	assert.GreaterOrEqual(t, back.Sub(arrived), 100*time.Millisecond)
	assert.Less(t, total, 250*time.Millisecond+3*time.Second)
}

// Under a jitter much larger than the gap between writes, the stream
// arrives whole and in order, and no write arrives before the delay.
func TestProxyJitterKeepsOrder(t *testing.T) {
	backend, _ := echoServer(t, "127.0.0.2:0")
	links := &Table{}
	require.NoError(t, links.Set("n1", []Link{{From: loopback, To: backend.Addr(), Behavior: Behavior{DelayMS: 20, JitterMS: 40}}}))
	c := dialTest(t, testProxy(t, links, backend))

	const writes = 100
	var want bytes.Buffer
	tick := time.NewTicker(time.Millisecond) // paces the writes into separate chunks
	defer tick.Stop()
	go func() {
		for i := range writes {
			<-tick.C
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(i))
			if _, err := c.Write(b[:]); err != nil {
				return
			}
		}
	}()
	for i := range writes {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		want.Write(b[:])
	}
	got := make([]byte, want.Len())
	_, err := io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, want.Bytes(), got, "the stream came back out of order or damaged")
}

// A rate cap holds the stream to it: 50 000 bytes at 400 kbit/s (50 000
// bytes/s, a bucket of 1500 bytes) take about a second.
func TestProxyRateCapsThroughput(t *testing.T) {
	backend, _ := echoServer(t, "127.0.0.2:0")
	links := &Table{}
	require.NoError(t, links.Set("n1", []Link{{From: loopback, To: backend.Addr(), Behavior: Behavior{RateKbit: 400}}}))
	c := dialTest(t, testProxy(t, links, backend))

	data := bytes.Repeat([]byte("0123456789"), 5000)
	start := time.Now()
	go func() { _, _ = c.Write(data) }()
	got := make([]byte, len(data))
	_, err := io.ReadFull(c, got)
	require.NoError(t, err)
	took := time.Since(start)
	t.Logf("%d bytes in %v", len(data), took)
	require.Equal(t, data, got)
	assert.GreaterOrEqual(t, took, time.Duration(float64(len(data)-1500)/50_000*float64(time.Second)))
	assert.Less(t, took, 10*time.Second)
}

// A connection on a link with no behavior passes at once, though
// another link through the same proxy is slow; a half-close passes
// through as a half-close.
func TestProxyOtherLinksUntouched(t *testing.T) {
	slow, _ := echoServer(t, "127.0.0.2:0")
	other, _ := echoServer(t, "127.0.0.3:0")
	links := &Table{}
	require.NoError(t, links.Set("n1", []Link{{From: loopback, To: slow.Addr(), Behavior: Behavior{DelayMS: 2000}}}))
	c := dialTest(t, testProxy(t, links, other))

	start := time.Now()
	_, err := c.Write([]byte("fast"))
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "fast", string(got))
	assert.Less(t, time.Since(start), 2*time.Second, "the other link's delay held this one back")
}

// A connection whose original destination is the proxy itself (no rule
// redirected it) is closed rather than forwarded in a loop.
func TestProxyRefusesUnredirected(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	self := ln.Addr().(*net.TCPAddr).AddrPort()
	dialed := make(chan struct{}, 1)
	p := &Proxy{Links: &Table{},
		OriginalDst: func(*net.TCPConn) (netip.AddrPort, error) { return self, nil },
		Dial: func(context.Context, netip.Addr, netip.AddrPort) (*net.TCPConn, error) {
			dialed <- struct{}{}
			return nil, io.EOF
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	c := dialTest(t, self.String())
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)
	cancel()
	require.NoError(t, <-done)
	assert.Empty(t, dialed)
}
