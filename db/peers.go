package db

import (
	"net"
	"strconv"
)

// PeerAddresser is a system whose nodes take their peers' connections
// (Raft's traffic) at an address apart from the clients'. The fault
// proxy intercepts the connections toward it.
type PeerAddresser interface {
	// PeerAddr is where n's peers reach it (host:port), and false when
	// the system does not say.
	PeerAddr(n Node) (string, bool)
}

var (
	_ PeerAddresser = (*ChaosNode)(nil)
	_ PeerAddresser = (*Etcd)(nil)
)

// PeerAddr is n's --peer-addr.
func (c *ChaosNode) PeerAddr(n Node) (string, bool) { return c.peerAddr(n), true }

// PeerAddr is n's peer URL's host and port.
func (e *Etcd) PeerAddr(n Node) (string, bool) {
	_, peer := e.ports()
	return net.JoinHostPort(n.Addr, strconv.Itoa(peer)), true
}
