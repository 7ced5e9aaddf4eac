package control

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// tcpProxy forwards connections to a target, and lets a test break them:
// cut closes them (a reset network, a killed sshd), freeze makes them drop
// everything silently (a peer that vanished without a reset).
type tcpProxy struct {
	ln        net.Listener
	targetNet string
	target    string
	accepted  atomic.Int32

	mu    sync.Mutex
	links []*proxyLink
}

// proxyLink is one forwarded connection.
type proxyLink struct {
	client, server net.Conn
	frozen         atomic.Bool
}

// startProxy listens on a loopback port, forwarding to target, until the
// test ends.
func startProxy(t *testing.T, target string) *tcpProxy {
	return startProxyOn(t, "tcp", "127.0.0.1:0", "tcp", target)
}

// startProxyOn is startProxy for any stream network: it listens on
// (network, addr) and forwards to (targetNet, target).
func startProxyOn(t *testing.T, network, addr, targetNet, target string) *tcpProxy {
	ln, err := net.Listen(network, addr)
	require.NoError(t, err)
	p := &tcpProxy{ln: ln, targetNet: targetNet, target: target}
	t.Cleanup(p.stop)
	go p.serve()
	return p
}

// stop closes the listener and every connection: the far end is gone.
func (p *tcpProxy) stop() {
	p.ln.Close()
	p.cut()
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		server, err := net.Dial(p.targetNet, p.target)
		if err != nil {
			client.Close()
			continue
		}
		l := &proxyLink{client: client, server: server}
		p.mu.Lock()
		p.links = append(p.links, l)
		p.mu.Unlock()
		go l.pump(server, client)
		go l.pump(client, server)
	}
}

// pump copies src to dst until either fails, swallowing data while frozen.
func (l *proxyLink) pump(dst, src net.Conn) {
	defer l.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (l *proxyLink) close() {
	l.client.Close()
	l.server.Close()
}

// cut closes every connection made so far.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.close()
	}
	p.links = nil
}

// freeze makes every connection made so far drop all data, both ways,
// without closing.
func (p *tcpProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.frozen.Store(true)
	}
}
