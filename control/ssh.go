package control

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"chaos/internal/sleep"
)

// sshRemote is a Remote over one SSH connection, replaced when it dies.
type sshRemote struct {
	d     *SSHDialer
	host  string        // as the caller named it, for messages
	addr  string        // host:port dialed
	slots chan struct{} // a token per open session: MaxSessions at most
	// dialing is held while (re)connecting, so that concurrent callers
	// share one new connection; a channel so that waiting respects ctx.
	dialing chan struct{}

	// priv is set by probePrivilege before the Remote is shared.
	priv privilege
	// verified is whether the first connection's host key was found in
	// known_hosts; set by Dial before the Remote is shared. Under
	// PasswordToVerifiedOnly, sudo gets the password only when it holds,
	// and every later connection must be verified too.
	verified bool

	mu     sync.Mutex
	client *ssh.Client   // nil while there is no live connection
	dead   chan struct{} // closed once client's transport has ended
	closed bool
}

func newSSHRemote(d *SSHDialer, host string) *sshRemote {
	return &sshRemote{
		d:       d,
		host:    host,
		addr:    HostAddr(host, d.cfg.Port),
		slots:   make(chan struct{}, d.cfg.MaxSessions),
		dialing: make(chan struct{}, 1),
	}
}

func (r *sshRemote) Host() string { return r.host }

// sudoPassword is the password to feed sudo: the configured one, or ""
// under PasswordToVerifiedOnly when the host's key was not verified.
func (r *sshRemote) sudoPassword() string {
	if r.d.cfg.PasswordToVerifiedOnly && !r.verified {
		return ""
	}
	return r.d.cfg.Password
}

// Close closes the connection; sessions still open fail.
func (r *sshRemote) Close() error {
	r.mu.Lock()
	c := r.client
	r.client, r.closed = nil, true
	r.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return nil
}

// adopt makes c the connection and watches it: when its transport ends, or
// it stops answering keepalives, it is closed and forgotten, and the next
// session makes a new one.
func (r *sshRemote) adopt(c *ssh.Client) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		c.Close()
		return
	}
	dead := make(chan struct{})
	r.client, r.dead = c, dead
	r.mu.Unlock()
	go func() {
		err := c.Wait()
		close(dead)
		if r.forget(c) {
			r.d.cfg.Log.Warn("ssh connection lost", "host", r.host, "err", err)
		}
	}()
	if r.d.cfg.KeepAlive > 0 {
		go keepAlive(c, r.d.cfg.KeepAlive, dead)
	}
}

// forget closes c and, if it is still the connection, drops it; it
// reports whether it did.
func (r *sshRemote) forget(c *ssh.Client) bool {
	r.mu.Lock()
	current := r.client == c
	if current {
		r.client = nil
	}
	r.mu.Unlock()
	c.Close()
	return current
}

// ended is closed once c's transport has ended (at once for a connection
// that is no longer the live one).
func (r *sshRemote) ended(c *ssh.Client) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client == c && r.dead != nil {
		return r.dead
	}
	gone := make(chan struct{})
	close(gone)
	return gone
}

// current is the live connection, nil if there is none.
func (r *sshRemote) current() (*ssh.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("%s: ssh: connection used after Close", r.host)
	}
	return r.client, nil
}

// conn returns the live connection, making one if there is none. retryable
// is as for SSHDialer.connect.
func (r *sshRemote) conn(ctx context.Context) (c *ssh.Client, retryable bool, err error) {
	if c, err := r.current(); c != nil || err != nil {
		return c, false, err
	}
	select {
	case r.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, false, fmt.Errorf("%s: ssh: waiting for the connection: %w", r.host, ctx.Err())
	}
	defer func() { <-r.dialing }()
	if c, err := r.current(); c != nil || err != nil {
		return c, false, err
	}
	c, verified, retryable, err := r.d.connect(ctx, r.host, r.addr)
	if err != nil {
		return nil, retryable, err
	}
	if r.d.cfg.PasswordToVerifiedOnly && r.verified && !verified {
		c.Close()
		return nil, false, fmt.Errorf("%s: ssh: the host's key was verified at the first connection and is not now: refusing the new connection", r.host)
	}
	r.d.cfg.Log.Info("ssh connected", "host", r.host, "addr", r.addr)
	r.adopt(c)
	return c, false, nil
}

// session opens a session once a slot is free, (re)connecting as needed.
// Nothing has been sent to run yet, so every transport failure here is
// retried with backoff. release closes the session and frees the slot.
func (r *sshRemote) session(ctx context.Context) (s *ssh.Session, release func(), err error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("%s: ssh: waiting for a free session: %w", r.host, ctx.Err())
	}
	err = r.d.cfg.Backoff.retry(ctx, sleep.For, func() (bool, error) {
		c, retryable, err := r.conn(ctx)
		if err != nil {
			return retryable, err
		}
		s, err = openSession(ctx, c, r.ended(c))
		var refused *ssh.OpenChannelError
		switch {
		case err == nil:
			return false, nil
		case ctx.Err() != nil:
			return false, fmt.Errorf("%s: ssh: open session: %w", r.host, ctx.Err())
		case !errors.As(err, &refused):
			// Not the server saying no: the connection is gone.
			if r.forget(c) {
				r.d.cfg.Log.Warn("ssh connection lost", "host", r.host, "err", err)
			}
		}
		return true, fmt.Errorf("%s: ssh: open session: %w", r.host, err)
	})
	if err != nil {
		<-r.slots
		return nil, nil, err
	}
	return s, func() { s.Close(); <-r.slots }, nil
}

// errTransportEnded is why a session could not open on a connection whose
// transport ended meanwhile.
var errTransportEnded = errors.New("the connection ended")

// openSession is c.NewSession bounded by ctx and by ended, which is closed
// when c's transport ends: a channel opened on a connection that has just
// ended may be written out and never answered (the library waits for its
// answer forever), and the connection must then be replaced, not waited
// on. A session that opens after either is closed.
func openSession(ctx context.Context, c *ssh.Client, ended <-chan struct{}) (*ssh.Session, error) {
	type opened struct {
		s   *ssh.Session
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := c.NewSession()
		ch <- opened{s, err}
	}()
	closeLate := func() {
		go func() {
			if o := <-ch; o.s != nil {
				o.s.Close()
			}
		}()
	}
	select {
	case o := <-ch:
		return o.s, o.err
	case <-ctx.Done():
		closeLate()
		return nil, ctx.Err()
	case <-ended:
		closeLate()
		return nil, errTransportEnded
	}
}

// keepAlive probes c every interval until dead is closed, and closes c when
// a probe goes unanswered for an interval: a connection whose peer
// vanished without a reset would otherwise hang every session.
func keepAlive(c *ssh.Client, interval time.Duration, dead <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-dead:
			return
		case <-t.C:
		}
		if !answers(c, interval) {
			c.Close()
			return
		}
	}
}

// answers sends one keepalive request and reports whether any reply came
// within timeout (OpenSSH replies with a failure, which is an answer).
func answers(c *ssh.Client, timeout time.Duration) bool {
	reply := make(chan error, 1)
	go func() {
		_, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
		reply <- err
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-reply:
		return err == nil
	case <-t.C:
		return false
	}
}
