package control

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostKeys checks host keys against one known_hosts file.
type hostKeys struct {
	file  string
	check ssh.HostKeyCallback // knownhosts' own callback
}

// loadHostKeys reads a known_hosts file once; it is not re-read during the
// run.
func loadHostKeys(file string) (*hostKeys, error) {
	check, err := knownhosts.New(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ssh: known_hosts file %s does not exist: create it (ssh-keyscan HOST >> %s) or pass --strict-host-key-checking=false", file, file)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh: known_hosts: %w", err)
	}
	return &hostKeys{file: file, check: check}, nil
}

// callback verifies a server's key, failing with *hostKeyMismatchError,
// *unknownHostKeyError or a revoked-key error.
func (h *hostKeys) callback(hostname string, remote net.Addr, key ssh.PublicKey) error {
	err := h.check(hostname, remote, key)
	var keyErr *knownhosts.KeyError
	var revoked *knownhosts.RevokedError
	switch {
	case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
		return &unknownHostKeyError{file: h.file, addr: hostname}
	case errors.As(err, &keyErr):
		return &hostKeyMismatchError{want: keyErr.Want}
	case errors.As(err, &revoked):
		return fmt.Errorf("host key revoked (%s line %d)", revoked.Revoked.Filename, revoked.Revoked.Line)
	}
	return err
}

// algorithms are the host key algorithms to ask addr for: those of the keys
// known_hosts has for it, so that a server with several host keys presents
// one that can be checked. Nil (the library's defaults) for an unknown host,
// which the callback then reports.
func (h *hostKeys) algorithms(addr string) []string {
	// Ask knownhosts about a key it cannot know; its KeyError lists the
	// keys it does know for addr. The key is a fixed one: this is a lookup.
	probe, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public())
	if err != nil {
		return nil
	}
	var keyErr *knownhosts.KeyError
	if !errors.As(h.check(addr, &net.TCPAddr{}, probe), &keyErr) {
		return nil
	}
	var algos []string
	for _, k := range keyErr.Want {
		if k.Key.Type() == ssh.KeyAlgoRSA {
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256)
			continue
		}
		algos = append(algos, k.Key.Type())
	}
	slices.Sort(algos)
	return slices.Compact(algos)
}

// hostKeyMismatchError: known_hosts has keys for the host, none of them the
// one it presented.
type hostKeyMismatchError struct {
	want []knownhosts.KnownKey
}

// Error reads "host key mismatch (/root/.ssh/known_hosts line 4)".
func (e *hostKeyMismatchError) Error() string {
	lines := make([]string, len(e.want))
	for i, k := range e.want {
		lines[i] = fmt.Sprintf("%s line %d", k.Filename, k.Line)
	}
	return "host key mismatch (" + strings.Join(lines, ", ") + ")"
}

// unknownHostKeyError: known_hosts has no key for the host.
type unknownHostKeyError struct {
	file string
	addr string // host:port as dialed
}

// Error says how to add the key or opt out.
func (e *unknownHostKeyError) Error() string {
	return fmt.Sprintf("host key not in %s; add it (%s) or pass --strict-host-key-checking=false", e.file, e.scan())
}

// scan is the command that adds the host's key to the file.
func (e *unknownHostKeyError) scan() string {
	host, port, err := net.SplitHostPort(e.addr)
	if err != nil {
		host, port = e.addr, "22"
	}
	scan := "ssh-keyscan " + ShellQuote(host)
	if port != "22" {
		scan = "ssh-keyscan -p " + port + " " + ShellQuote(host)
	}
	return scan + " >> " + ShellQuote(e.file)
}

// unverifiedHostError: the login needed the password, and the host's key is
// not in known_hosts (PasswordToVerifiedOnly).
type unverifiedHostError struct {
	file string
	addr string // host:port as dialed
}

// Error says why nothing was sent and how to go on.
func (e *unverifiedHostError) Error() string {
	return fmt.Sprintf("host key not verified against %s: the password is sent only to a host whose key is there; "+
		"add the key if the host is yours (%s) or log in with a key", e.file, (&unknownHostKeyError{file: e.file, addr: e.addr}).scan())
}
