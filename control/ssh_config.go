package control

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SSHConfig says how to reach and log in to the hosts of a run; the zero
// value of each field means its default.
type SSHConfig struct {
	// User is the login user (default root). When it is not root, commands
	// run through sudo.
	User string
	// Port is used for hosts given without one (default 22).
	Port int
	// KeyFiles are private key files to offer. Nil means ~/.ssh/id_ed25519
	// and ~/.ssh/id_rsa, each when it exists; an explicit file that cannot
	// be read is an error.
	KeyFiles []string
	// Agent also offers the keys of the SSH agent at $SSH_AUTH_SOCK, if set.
	Agent bool
	// Password is offered for password and keyboard-interactive login, and
	// fed to sudo when sudo asks for one.
	Password string
	// InsecureIgnoreHostKey accepts any host key
	// (--strict-host-key-checking=false). Host keys are checked by default.
	InsecureIgnoreHostKey bool
	// KnownHosts is the known_hosts file host keys are checked against
	// (default ~/.ssh/known_hosts).
	KnownHosts string
	// PasswordToVerifiedOnly sends the password (to a password or
	// keyboard-interactive login, and to sudo) only to a host whose key is
	// in KnownHosts, even with InsecureIgnoreHostKey: a host whose key
	// cannot be verified gets no password whatever it prompts, and a login
	// that needs one fails naming the host. With it, a connection that
	// replaces one to a verified host must be verified too. chaos heal sets
	// it: the hosts it dials may come from a stored file.
	PasswordToVerifiedOnly bool
	// MaxSessions bounds the sessions open at once on one connection
	// (default 8, under OpenSSH's own default MaxSessions of 10).
	MaxSessions int
	// DialTimeout bounds one connection attempt: TCP connect and SSH
	// handshake (default 10s).
	DialTimeout time.Duration
	// KeepAlive is how often an idle connection is probed, and how long a
	// probe may go unanswered before the connection is dropped and replaced
	// (default 15s; negative disables).
	KeepAlive time.Duration
	// Backoff is how reconnecting after a transport failure is paced
	// (default DefaultBackoff()).
	Backoff Backoff
	// Log receives connection events: connects, lost connections
	// (default: discarded).
	Log *slog.Logger
	// Warn receives one line per problem that does not stop a login but
	// should be fixed, such as a private key file that group or others can
	// read (default: discarded).
	Warn io.Writer
}

// withDefaults fills the zero fields; home is the user's home directory.
func (c SSHConfig) withDefaults(home string) SSHConfig {
	if c.User == "" {
		c.User = "root"
	}
	if c.Port == 0 {
		c.Port = 22
	}
	if c.KnownHosts == "" {
		c.KnownHosts = filepath.Join(home, ".ssh", "known_hosts")
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 8
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Warn == nil {
		c.Warn = io.Discard
	}
	if c.Backoff == (Backoff{}) {
		c.Backoff = DefaultBackoff()
	}
	return c
}

// defaultKeyFiles are the key files tried when SSHConfig.KeyFiles is nil.
func defaultKeyFiles(home string) []string {
	return []string{
		filepath.Join(home, ".ssh", "id_ed25519"),
		filepath.Join(home, ".ssh", "id_rsa"),
	}
}

// homeDir is the current user's home directory, or "" when unknown (the
// defaults under it then fail to load with a message naming the path).
func homeDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return home
}

// HostAddr is the host:port SSH dials for host, which is "name", "name:port",
// "[v6]:port" or a bare IPv6 address.
func HostAddr(host string, port int) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port))
}
