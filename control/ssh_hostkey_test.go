package control

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHostsLine is one known_hosts line for addr (host:port).
func knownHostsLine(addr string, key ssh.PublicKey) string {
	return knownhosts.Line([]string{knownhosts.Normalize(addr)}, key) + "\n"
}

func TestHostKeysAcceptTheKnownKey(t *testing.T) {
	dir := t.TempDir()
	_, right := newKey(t, dir, "right")
	file := writeFile(t, dir, "known_hosts", knownHostsLine("127.0.0.51:2222", right.PublicKey()))
	h, err := loadHostKeys(file)
	require.NoError(t, err)
	require.NoError(t, h.callback("127.0.0.51:2222", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 51), Port: 2222}, right.PublicKey()))
}

func TestHostKeysMismatchNamesTheLine(t *testing.T) {
	dir := t.TempDir()
	_, right := newKey(t, dir, "right")
	_, other := newKey(t, dir, "other")
	file := writeFile(t, dir, "known_hosts", "# test hosts\n"+
		knownHostsLine("n1:22", right.PublicKey())+
		"\n"+
		knownHostsLine("n3:22", other.PublicKey()))
	h, err := loadHostKeys(file)
	require.NoError(t, err)

	err = h.callback("n3:22", &net.TCPAddr{}, right.PublicKey())
	require.EqualError(t, err, "host key mismatch ("+file+" line 4)")

	d := &SSHDialer{cfg: SSHConfig{User: "root"}}
	require.EqualError(t, d.handshakeError("n3", "", wrapLikeX(err)),
		"n3: ssh: handshake failed: host key mismatch ("+file+" line 4)")
}

// wrapLikeX wraps a host key callback's error as x/crypto's handshake does.
func wrapLikeX(err error) error {
	return fmt.Errorf("ssh: handshake failed: %w", err)
}

func TestHostKeysUnknownHostSaysHowToAddIt(t *testing.T) {
	dir := t.TempDir()
	_, key := newKey(t, dir, "key")
	file := writeFile(t, dir, "known_hosts", knownHostsLine("n1:22", key.PublicKey()))
	h, err := loadHostKeys(file)
	require.NoError(t, err)

	err = h.callback("n3:22", &net.TCPAddr{}, key.PublicKey())
	require.EqualError(t, err, "host key not in "+file+"; add it (ssh-keyscan n3 >> "+file+") or pass --strict-host-key-checking=false")
	err = h.callback("127.0.0.51:2222", &net.TCPAddr{}, key.PublicKey())
	require.EqualError(t, err, "host key not in "+file+"; add it (ssh-keyscan -p 2222 127.0.0.51 >> "+file+") or pass --strict-host-key-checking=false")

	d := &SSHDialer{cfg: SSHConfig{User: "root"}}
	require.EqualError(t, d.handshakeError("n3", "", wrapLikeX(err)),
		"n3: ssh: host key not in "+file+"; add it (ssh-keyscan -p 2222 127.0.0.51 >> "+file+") or pass --strict-host-key-checking=false")
}

func TestHostKeysRevoked(t *testing.T) {
	dir := t.TempDir()
	_, key := newKey(t, dir, "key")
	file := writeFile(t, dir, "known_hosts", "@revoked * "+string(ssh.MarshalAuthorizedKey(key.PublicKey())))
	h, err := loadHostKeys(file)
	require.NoError(t, err)
	require.EqualError(t, h.callback("n3:22", &net.TCPAddr{}, key.PublicKey()), "host key revoked ("+file+" line 1)")
}

func TestHostKeysMissingFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "known_hosts")
	_, err := loadHostKeys(file)
	require.EqualError(t, err, "ssh: known_hosts file "+file+" does not exist: create it (ssh-keyscan HOST >> "+file+") or pass --strict-host-key-checking=false")
}

// TestHostKeyAlgorithmsFollowKnownHosts: a server offering several host
// keys is asked for one known_hosts can check.
func TestHostKeyAlgorithmsFollowKnownHosts(t *testing.T) {
	dir := t.TempDir()
	_, ed := newKey(t, dir, "ed")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	rsaPub, err := ssh.NewPublicKey(&rsaKey.PublicKey)
	require.NoError(t, err)
	file := writeFile(t, dir, "known_hosts",
		knownHostsLine("n1:22", ed.PublicKey())+
			knownHostsLine("n2:2222", rsaPub)+
			knownHostsLine("n2:2222", ed.PublicKey()))
	h, err := loadHostKeys(file)
	require.NoError(t, err)

	require.Equal(t, []string{ssh.KeyAlgoED25519}, h.algorithms("n1:22"))
	require.Equal(t, []string{ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoED25519}, h.algorithms("n2:2222"))
	require.Nil(t, h.algorithms("n3:22"), "unknown hosts get the defaults, and the callback's hint")
}
