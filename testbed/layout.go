package testbed

import (
	"chaos/internal/atomicfile"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
)

// privateDir is a directory a host has to itself: mounted at Target in the
// host, it is the directory Name under the host's directory in the testbed.
type privateDir struct {
	Target string
	Name   string
	Mode   os.FileMode
}

// privateDirs are where chaos deploys to (/opt/chaos), where nodes keep their
// data (/var/lib/chaos), and /tmp, so uploads to the same temporary path on
// every host do not collide.
func privateDirs() []privateDir {
	return []privateDir{
		{Target: "/opt/chaos", Name: "opt-chaos", Mode: 0o755},
		{Target: "/var/lib/chaos", Name: "var-lib-chaos", Mode: 0o755},
		{Target: "/tmp", Name: "tmp", Mode: os.ModeSticky | 0o777},
	}
}

// Files of a host's directory.
const (
	hostKeyFile    = "ssh_host_ed25519_key"
	sshdConfigFile = "sshd_config"
	sshdLogFile    = "sshd.log"
)

// writeFiles writes what the hosts' sshds read: the client key pair and
// authorized_keys in dir, and for each host its directory with host key,
// sshd_config and private directories. It returns the hosts' public keys in
// host order. A nil random means crypto/rand.
func writeFiles(dir string, st State, random io.Reader) ([]ssh.PublicKey, error) {
	if random == nil {
		random = rand.Reader
	}
	client, err := newKeyPair(random, "chaos-testbed")
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, KeyFile), client.private, 0o600); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, pubKeyFile), client.authorizedLine(), 0o644); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, authorizedKeysFile), client.authorizedLine(), 0o644); err != nil {
		return nil, err
	}
	var keys []ssh.PublicKey
	for _, h := range st.Hosts {
		key, err := writeHostFiles(dir, st.Prefix, h, random)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// writeHostFiles makes host h's directory and returns its public host key.
// The paths in its sshd_config are those the host sees.
func writeHostFiles(dir, prefix string, h Host, random io.Reader) (ssh.PublicKey, error) {
	hd := hostDir(dir, h.Name)
	if err := os.MkdirAll(hd, 0o755); err != nil {
		return nil, fmt.Errorf("make %s's directory: %w", h.Name, err)
	}
	for _, p := range privateDirs() {
		if err := makeDir(filepath.Join(hd, p.Name), p.Mode); err != nil {
			return nil, fmt.Errorf("make %s's %s: %w", h.Name, p.Target, err)
		}
	}
	key, err := newKeyPair(random, h.Name)
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(hd, hostKeyFile), key.private, 0o600); err != nil {
		return nil, err
	}
	inside := insideDir(prefix)
	config := sshdConfig(h, filepath.Join(hostDir(inside, h.Name), hostKeyFile), filepath.Join(inside, authorizedKeysFile))
	if err := writeFile(filepath.Join(hd, sshdConfigFile), []byte(config), 0o644); err != nil {
		return nil, err
	}
	return key.public, nil
}

// makeDir makes a directory with exactly mode, whatever the umask.
func makeDir(path string, mode os.FileMode) error {
	if err := os.Mkdir(path, mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// writeFile writes a file with exactly mode, whatever the umask or the mode
// of a file it replaces.
func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := atomicfile.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
