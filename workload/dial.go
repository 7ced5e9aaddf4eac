package workload

import (
	"context"
	"errors"
	"net"
	"time"
)

// dialFailed reports whether err is the failure to open a connection.
// net/http resends a request on a new connection only when nothing of it
// was written on the old one, so a request whose final error is a dial
// error never reached any server: it certainly did not happen.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// refusalPause is how long a client waits after its node refused a
// connection or answered that it cannot serve (no leader), as a
// reconnecting client would: without it, workers bound to a killed or
// partitioned node spin, filling the history with thousands of failures a
// second.
const refusalPause = 20 * time.Millisecond

// pauseAfterRefusal waits refusalPause, or until ctx ends.
func pauseAfterRefusal(ctx context.Context) {
	t := time.NewTimer(refusalPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
