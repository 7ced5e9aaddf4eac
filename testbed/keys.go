package testbed

import (
	"crypto/ed25519"
	"encoding/pem"
	"fmt"
	"io"

	"golang.org/x/crypto/ssh"
)

// keyPair is an ed25519 key pair in the forms the testbed's files take.
type keyPair struct {
	private []byte // OpenSSH private key file, PEM
	public  ssh.PublicKey
}

// newKeyPair makes a key pair from rand, with comment in the private key.
func newKeyPair(rand io.Reader, comment string) (keyPair, error) {
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate %s key: %w", comment, err)
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return keyPair{}, fmt.Errorf("encode %s key: %w", comment, err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return keyPair{}, fmt.Errorf("encode %s public key: %w", comment, err)
	}
	return keyPair{private: pem.EncodeToMemory(block), public: sshPub}, nil
}

// authorizedLine is the public key as a line of authorized_keys or a .pub
// file.
func (k keyPair) authorizedLine() []byte {
	return ssh.MarshalAuthorizedKey(k.public)
}
