package control

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

func TestCredentialsExplicitKeyMustLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope")
	_, err := loadCredentials(SSHConfig{KeyFiles: []string{missing}}, dir)
	require.EqualError(t, err, "ssh: key file "+missing+" does not exist")

	garbage := writeFile(t, dir, "garbage", "not a key\n")
	_, err = loadCredentials(SSHConfig{KeyFiles: []string{garbage}}, dir)
	require.ErrorContains(t, err, "ssh: key file "+garbage+": ")

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	require.NoError(t, err)
	locked := writeFile(t, dir, "locked", string(pem.EncodeToMemory(block)))
	_, err = loadCredentials(SSHConfig{KeyFiles: []string{locked}}, dir)
	require.EqualError(t, err, "ssh: key file "+locked+" has a passphrase: add it to the SSH agent (ssh-add "+locked+")")
}

func TestCredentialsDefaultKeysAreOptional(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, ".ssh"), 0o700))
	_, err := loadCredentials(SSHConfig{}, home)
	require.EqualError(t, err, "ssh: nothing to log in with: no key file ("+
		filepath.Join(home, ".ssh", "id_ed25519")+", "+filepath.Join(home, ".ssh", "id_rsa")+
		"), no SSH agent, no password: pass --ssh-private-key, or --password-file or $CHAOS_SSH_PASSWORD")

	c, err := loadCredentials(SSHConfig{Password: "pw"}, home)
	require.NoError(t, err)
	_, offered, done := c.methods(func() error { return nil })
	done()
	require.Equal(t, "password", offered)

	key, _ := newKey(t, filepath.Join(home, ".ssh"), "id_ed25519")
	c, err = loadCredentials(SSHConfig{}, home)
	require.NoError(t, err)
	require.Equal(t, []string{key}, c.keyFiles)
}

// startAgent serves an in-memory SSH agent holding one new key on a unix
// socket, and points SSH_AUTH_SOCK at it.
func startAgent(t *testing.T) ssh.Signer {
	t.Helper()
	keyring := agent.NewKeyring()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	require.NoError(t, keyring.Add(agent.AddedKey{PrivateKey: priv}))
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = agent.ServeAgent(keyring, conn)
			}()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return signer
}

func TestCredentialsOfferWhatTheyHave(t *testing.T) {
	dir := t.TempDir()
	key, _ := newKey(t, dir, "id")
	startAgent(t)
	c, err := loadCredentials(SSHConfig{KeyFiles: []string{key}, Agent: true, Password: "pw"}, dir)
	require.NoError(t, err)
	methods, offered, done := c.methods(func() error { return nil })
	done()
	require.Len(t, methods, 3, "public keys, password, keyboard-interactive")
	require.Equal(t, "keys "+key+"; 1 agent keys; password", offered)

	t.Setenv("SSH_AUTH_SOCK", filepath.Join(dir, "gone.sock"))
	c, err = loadCredentials(SSHConfig{KeyFiles: []string{key}, Agent: true}, dir)
	require.NoError(t, err)
	_, offered, done = c.methods(func() error { return nil })
	done()
	require.Contains(t, offered, "keys "+key+"; no agent keys (agent: dial unix "+filepath.Join(dir, "gone.sock"))
}

func TestAuthErrorFormat(t *testing.T) {
	require.EqualError(t, authError("n3", "admin", "keys /k/id; password"),
		"n3: ssh: authentication failed for user admin (tried keys /k/id; password): check --username, --ssh-private-key and the password (--password-file or $CHAOS_SSH_PASSWORD)")
	d := &SSHDialer{cfg: SSHConfig{User: "root"}}
	err := d.handshakeError("n3", "keys /k/id", wrapLikeX(errorString("ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain")))
	require.EqualError(t, err,
		"n3: ssh: authentication failed for user root (tried keys /k/id): check --username, --ssh-private-key and the password (--password-file or $CHAOS_SSH_PASSWORD)")
}

type errorString string

func (e errorString) Error() string { return string(e) }
