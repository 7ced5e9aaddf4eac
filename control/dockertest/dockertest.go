// Package dockertest makes this machine's Docker Engine reachable over
// TCP on loopback, for tests of a daemon on another machine (DOCKER_HOST
// tcp://...): the Engine's API is the same, and chaos, seeing a TCP
// address, takes the Docker host for out of reach.
package dockertest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Socket is where this machine's Engine listens.
const Socket = "/var/run/docker.sock"

// EngineOverTCP forwards connections to a loopback port to the Engine's
// socket until the test ends, and returns the port's DOCKER_HOST
// ("tcp://127.0.0.1:PORT").
func EngineOverTCP(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { forward(c) })
		}
	})
	return "tcp://" + ln.Addr().String()
}

// forward copies c to the Engine's socket and back, passing each side's
// end of writing on to the other (docker exec half-closes its stream
// when its input ends), until both directions ended.
func forward(c net.Conn) {
	defer c.Close()
	e, err := net.Dial("unix", Socket)
	if err != nil {
		return
	}
	defer e.Close()
	var wg sync.WaitGroup
	wg.Go(func() { pipe(e, c) })
	pipe(c, e)
	wg.Wait()
}

// pipe copies from src to dst, then ends dst's writing.
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = dst.Close()
	}
}
