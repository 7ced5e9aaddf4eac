package described

import (
	"net"
	"strconv"

	"chaos/db"
)

var _ db.PeerAddresser = (*System)(nil)

// PeerAddr is n's address at ports.peer, and false when the description
// has no peer port.
func (s *System) PeerAddr(n db.Node) (string, bool) {
	if s.desc.Ports.Peer == 0 {
		return "", false
	}
	return net.JoinHostPort(n.Addr, strconv.Itoa(s.desc.Ports.Peer)), true
}
