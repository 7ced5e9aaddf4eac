package workload

import (
	"errors"
	"net"
)

// dialFailed reports whether err is the failure to open a connection.
// net/http resends a request on a new connection only when nothing of it
// was written on the old one, so a request whose final error is a dial
// error never reached any server: it certainly did not happen.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
