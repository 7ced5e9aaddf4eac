package faultproxy

import (
	"log/slog"
	"net"
	"time"
)

// Bounds of the pause after a failed accept: the first of a streak is
// acceptPauseMin, each further one twice the one before, at most
// acceptPauseMax (as net/http's Server does). A failure that does not
// clear (the process out of file descriptors until connections close)
// thus costs one try a second.
const (
	acceptPauseMin = 5 * time.Millisecond
	acceptPauseMax = time.Second
)

// acceptFailures is a streak of failed accepts: the accepts that failed
// since the last that succeeded. It logs one line when a streak starts
// and one when it ends, however long it lasts. The zero value is no
// streak.
type acceptFailures struct {
	n     int           // failures in the streak
	pause time.Duration // the last pause returned
}

// failed records a failed accept and returns the pause before the next
// try.
func (f *acceptFailures) failed(log *slog.Logger, err error) time.Duration {
	f.n++
	if f.n == 1 {
		f.pause = acceptPauseMin
		log.Warn("accept failed; trying again after pauses from 5ms, doubled each time up to 1s, until one succeeds", "err", err)
		return f.pause
	}
	f.pause = min(2*f.pause, acceptPauseMax)
	return f.pause
}

// ended records an accept that succeeded: it ends the streak.
func (f *acceptFailures) ended(log *slog.Logger) {
	if f.n > 0 {
		log.Info("accepting again", "failed_accepts", f.n)
	}
	*f = acceptFailures{}
}

// capRefusals is a streak of connections refused at the cap: those closed
// since the last that found room. It logs one line when a streak starts
// and one when it ends. The zero value is no streak.
type capRefusals struct{ n uint64 }

// refused closes c, accepted when the proxy already forwards limit
// connections, at once: with a reset, so that its opener sees a refusal
// rather than a server's orderly close.
func (r *capRefusals) refused(log *slog.Logger, c net.Conn, limit int) {
	r.n++
	if r.n == 1 {
		log.Warn("at the connection cap: refusing new connections until one closes", "max_conns", limit, "from", c.RemoteAddr().String())
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// ended records a connection that found room under the cap: it ends the
// streak.
func (r *capRefusals) ended(log *slog.Logger) {
	if r.n > 0 {
		log.Info("under the connection cap again", "refused", r.n)
	}
	*r = capRefusals{}
}
