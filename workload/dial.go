package workload

import (
	"errors"
	"net"
)

// dialFailed reports whether err is the failure to open a connection.
// ConnTransport never resends a request, so a request whose error is a
// dial error never reached any server: it certainly did not happen.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
