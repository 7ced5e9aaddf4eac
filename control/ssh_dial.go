package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
)

// SSHDialer connects to hosts with one SSHConfig. Key files and known_hosts
// are read once, by NewSSHDialer, so that their problems are reported once
// and without a host. It is safe for concurrent use.
type SSHDialer struct {
	cfg   SSHConfig
	creds *credentials
	// keys is KnownHosts, nil when no host key is looked up. With host
	// keys checked, a key not in it fails the login; with checking off
	// under PasswordToVerifiedOnly, it only decides who gets the password
	// (nil when it could not be read: no host does).
	keys *hostKeys
}

// NewSSHDialer checks cfg, fills its defaults and loads its key files and
// known_hosts file. Its errors are configuration errors (exit 254).
func NewSSHDialer(cfg SSHConfig) (*SSHDialer, error) {
	home := homeDir()
	cfg = cfg.withDefaults(home)
	creds, err := loadCredentials(cfg, home)
	if err != nil {
		return nil, err
	}
	d := &SSHDialer{cfg: cfg, creds: creds}
	switch {
	case !cfg.InsecureIgnoreHostKey:
		if d.keys, err = loadHostKeys(cfg.KnownHosts); err != nil {
			return nil, err
		}
	case cfg.PasswordToVerifiedOnly && cfg.Password != "":
		// Unchecked logins may go on with keys; the password needs a
		// verified key, and an unreadable known_hosts verifies none.
		d.keys, _ = loadHostKeys(cfg.KnownHosts)
	}
	return d, nil
}

// DialSSH is NewSSHDialer(cfg) then Dial(ctx, host), for a single host.
func DialSSH(ctx context.Context, host string, cfg SSHConfig) (Remote, error) {
	d, err := NewSSHDialer(cfg)
	if err != nil {
		return nil, err
	}
	return d.Dial(ctx, host)
}

// Dial connects to host ("name" or "name:port"), logs in, and finds how
// commands get root there (directly, or sudo with or without the password).
// The first connection is tried once: a host that cannot be reached or
// refuses us at the start of a run is a setup failure to report, not to
// wait out. Later reconnections retry with backoff.
func (d *SSHDialer) Dial(ctx context.Context, host string) (Remote, error) {
	r := newSSHRemote(d, host)
	c, verified, _, err := d.connect(ctx, r.host, r.addr)
	if err != nil {
		return nil, err
	}
	r.verified = verified
	r.adopt(c)
	if err := r.probePrivilege(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// connect makes one connection to addr and logs in. verified says whether
// the host's key was checked against known_hosts and found there.
// retryable says whether trying again may help: yes for network and
// transport trouble, no for a host key or a login that was refused.
func (d *SSHDialer) connect(ctx context.Context, host, addr string) (c *ssh.Client, verified, retryable bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.DialTimeout)
	defer cancel()
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, true, fmt.Errorf("%s: ssh: %w", host, err)
	}
	// The handshake has no context: closing the connection interrupts it.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	var ok atomic.Bool // set by the host key check, read by the login
	auth, offered, done := d.creds.methods(d.passwordGate(addr, &ok))
	defer done()
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, d.clientConfig(addr, auth, &ok))
	if !stop() {
		return nil, false, true, fmt.Errorf("%s: ssh: handshake with %s: %w", host, addr, ctx.Err())
	}
	if err != nil {
		conn.Close()
		err = d.handshakeError(host, offered, err)
		var transport *handshakeTransportError
		return nil, false, errors.As(err, &transport), err
	}
	return ssh.NewClient(cc, chans, reqs), ok.Load(), false, nil
}

// clientConfig is the SSH client configuration for one login to addr; its
// host key check sets verified when the key is in known_hosts, and fails
// the login for a key that is not unless host keys go unchecked.
func (d *SSHDialer) clientConfig(addr string, auth []ssh.AuthMethod, verified *atomic.Bool) *ssh.ClientConfig {
	cfg := &ssh.ClientConfig{User: d.cfg.User, Auth: auth}
	if d.keys == nil {
		cfg.HostKeyCallback = ssh.InsecureIgnoreHostKey()
		return cfg
	}
	cfg.HostKeyCallback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := d.keys.callback(hostname, remote, key)
		verified.Store(err == nil)
		if d.cfg.InsecureIgnoreHostKey {
			return nil // any key is accepted; only a known one earns the password
		}
		return err
	}
	cfg.HostKeyAlgorithms = d.keys.algorithms(addr)
	return cfg
}

// passwordGate says, at login to addr, whether the password may be sent:
// always, unless PasswordToVerifiedOnly; then only once the host key check
// has set verified, and otherwise it is the *unverifiedHostError that ends
// the login.
func (d *SSHDialer) passwordGate(addr string, verified *atomic.Bool) func() error {
	return func() error {
		if !d.cfg.PasswordToVerifiedOnly || verified.Load() {
			return nil
		}
		return &unverifiedHostError{file: d.cfg.KnownHosts, addr: addr}
	}
}

// handshakeError is the one-line error of a failed handshake: a host key or
// login problem, or else a *handshakeTransportError.
func (d *SSHDialer) handshakeError(host, offered string, err error) error {
	var mismatch *hostKeyMismatchError
	var unknown *unknownHostKeyError
	var unverified *unverifiedHostError
	switch {
	case errors.As(err, &unverified):
		return fmt.Errorf("%s: ssh: %w", host, unverified)
	case errors.As(err, &mismatch):
		return fmt.Errorf("%s: ssh: handshake failed: %w", host, mismatch)
	case errors.As(err, &unknown):
		return fmt.Errorf("%s: ssh: %w", host, unknown)
	case strings.Contains(err.Error(), "unable to authenticate"):
		return authError(host, d.cfg.User, offered)
	}
	return &handshakeTransportError{host: host, err: err}
}

// handshakeTransportError is a handshake cut short by the transport (the
// server closed the connection, a reset): worth retrying.
type handshakeTransportError struct {
	host string
	err  error
}

func (e *handshakeTransportError) Error() string { return e.host + ": " + e.err.Error() }
func (e *handshakeTransportError) Unwrap() error { return e.err }
