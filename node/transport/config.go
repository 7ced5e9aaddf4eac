package transport

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"chaos/raft"
)

// Config configures a Transport. Zero durations and sizes take the defaults
// named on each field.
type Config struct {
	// ID is this node's raft id (non-zero).
	ID uint64
	// Listen is the host:port to accept peer connections on. Ignored when
	// Listener is set.
	Listen string
	// Listener, if set, is an already bound listener to accept on instead of
	// Listen. The Transport owns it from New on and closes it in Close.
	Listener net.Listener
	// Peers maps the id of every other member to its host:port. An entry for
	// ID itself is ignored, so the full member list may be passed.
	Peers map[uint64]string
	// LocalIP is the address outgoing connections are dialed from (port
	// chosen by the OS), so that a firewall rule on a node's address cuts
	// its traffic even when all nodes share one host. Nil lets the OS choose.
	LocalIP net.IP
	// Handler receives each inbound batch, from that connection's reader
	// goroutine; calls for different connections may run concurrently. It
	// owns the slice and may keep it. It must return, and must not call
	// Close: while it runs that connection is not read, and Close waits for it.
	Handler func(msgs []raft.Message)
	// PeerLost, if set, is called by an inbound connection's reader
	// goroutine when the connection ends because the peer closed or reset
	// it (as when its process dies), after every batch read from it went to
	// the Handler; id is the peer whose messages it carried. It is not
	// called for a connection that idled out (silence says nothing of the
	// peer), carried no message, was closed for bad input, or was closed by
	// Close. The same rules as for Handler apply.
	PeerLost func(id uint64)
	// Logger receives connection events and rejected input (nil: discard).
	Logger *slog.Logger
	// Rand seeds every random decision: fault outcomes and backoff jitter.
	// New draws one seed per peer from it and never uses it afterwards. Nil
	// makes backoff jitter unseeded and forbids random faults (ErrNoRand).
	Rand *rand.Rand
	// Clock is the time source for fault delays (nil: time.Now). Socket
	// deadlines always use real time.
	Clock func() time.Time

	// QueueLen bounds each peer's outbound queue, and separately the
	// messages its fault pipeline holds, in messages (default 4096). Sends
	// beyond it are dropped and counted; raft retransmits.
	QueueLen int
	// MaxFrameBytes bounds frame payloads both ways (default and maximum
	// MaxFrameBytes).
	MaxFrameBytes int
	// DialTimeout bounds one connection attempt (default 1s).
	DialTimeout time.Duration
	// WriteTimeout bounds writing one frame (default 5s); when it expires the
	// connection is dropped and redialed.
	WriteTimeout time.Duration
	// KeepAlive is the sender's tick: a connection with nothing written for
	// a whole tick gets an empty frame, and messages held back by Reorder are
	// released (default 1s).
	KeepAlive time.Duration
	// IdleTimeout closes an inbound connection that delivers no byte for this
	// long (default 10s); it must exceed 2*KeepAlive.
	IdleTimeout time.Duration
	// FrameTimeout bounds receiving the rest of a frame once its first byte
	// has arrived (default 30s).
	FrameTimeout time.Duration
	// BackoffMin and BackoffMax bound the redial backoff, which doubles
	// after each failure and is jittered into [b/2, b] (defaults 10ms, 1s).
	BackoffMin, BackoffMax time.Duration
	// MaxInbound bounds concurrently open inbound connections (default 256);
	// connections beyond it are closed on accept.
	MaxInbound int
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	setDefault(&c.QueueLen, 4096)
	setDefault(&c.MaxFrameBytes, MaxFrameBytes)
	setDefault(&c.MaxInbound, 256)
	setDefault(&c.DialTimeout, time.Second)
	setDefault(&c.WriteTimeout, 5*time.Second)
	setDefault(&c.KeepAlive, time.Second)
	setDefault(&c.IdleTimeout, 10*time.Second)
	setDefault(&c.FrameTimeout, 30*time.Second)
	setDefault(&c.BackoffMin, 10*time.Millisecond)
	setDefault(&c.BackoffMax, time.Second)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

func setDefault[T int | time.Duration](p *T, v T) {
	if *p == 0 {
		*p = v
	}
}

// validate checks a Config that has had its defaults applied.
func (c *Config) validate() error {
	switch {
	case c.ID == 0:
		return fmt.Errorf("config: ID must be non-zero")
	case c.Listener == nil && c.Listen == "":
		return fmt.Errorf("config: Listen or Listener is required")
	case c.Handler == nil:
		return fmt.Errorf("config: Handler is required")
	case c.QueueLen < 0 || c.MaxInbound < 0:
		return fmt.Errorf("config: negative QueueLen %d or MaxInbound %d", c.QueueLen, c.MaxInbound)
	case c.MaxFrameBytes < 0 || c.MaxFrameBytes > MaxFrameBytes:
		return fmt.Errorf("config: MaxFrameBytes %d outside (0, %d]", c.MaxFrameBytes, MaxFrameBytes)
	case min(c.DialTimeout, c.WriteTimeout, c.KeepAlive, c.IdleTimeout, c.FrameTimeout, c.BackoffMin) < 0:
		return fmt.Errorf("config: negative timeout or backoff")
	case c.IdleTimeout <= 2*c.KeepAlive:
		return fmt.Errorf("config: IdleTimeout %v must exceed twice KeepAlive %v", c.IdleTimeout, c.KeepAlive)
	case c.BackoffMax < c.BackoffMin:
		return fmt.Errorf("config: BackoffMax %v below BackoffMin %v", c.BackoffMax, c.BackoffMin)
	}
	for id, addr := range c.Peers {
		if id == 0 {
			return fmt.Errorf("config: peer id 0 (address %q)", addr)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("config: peer %d address: %w", id, err)
		}
	}
	return nil
}
