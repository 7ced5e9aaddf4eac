package transport

import (
	"errors"
	"net"
	"sync"
)

var (
	errConnSetClosed = errors.New("transport closed")
	errConnSetFull   = errors.New("too many connections")
)

// connSet tracks open connections so that Close can interrupt goroutines
// blocked reading or writing them. Once closeAll has run, add refuses.
type connSet struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	limit  int // 0: unbounded
	closed bool
}

func newConnSet(limit int) *connSet {
	return &connSet{conns: make(map[net.Conn]struct{}), limit: limit}
}

// add registers c; on error c is not registered and the caller must close it.
func (s *connSet) add(c net.Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errConnSetClosed
	case s.limit > 0 && len(s.conns) >= s.limit:
		return errConnSetFull
	}
	s.conns[c] = struct{}{}
	return nil
}

// remove unregisters and closes c.
func (s *connSet) remove(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

// closeAll closes every registered connection and refuses later adds.
func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
}
