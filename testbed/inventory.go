package testbed

import (
	"net"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// writeInventory writes the files `chaos run` takes: the hosts' addresses,
// one per line, and their keys in known_hosts form. It runs last in Up, so
// an inventory exists only for hosts that answered.
func writeInventory(dir string, st State, hostKeys []ssh.PublicKey) error {
	var nodes, known strings.Builder
	for i, h := range st.Hosts {
		nodes.WriteString(h.Addr + "\n")
		known.WriteString(knownhosts.Line([]string{net.JoinHostPort(h.Addr, sshPort)}, hostKeys[i]) + "\n")
	}
	if err := writeFile(filepath.Join(dir, KnownHostsFile), []byte(known.String()), 0o644); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, NodesFile), []byte(nodes.String()), 0o644)
}
