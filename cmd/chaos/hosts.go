package main

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"chaos/control"
	"chaos/internal/inputfile"
	"chaos/internal/secret"
)

// hostFlags are the flags that name the hosts and how to reach them over
// SSH, shared by every command that acts on a cluster's hosts (run, heal,
// bench, test-all).
type hostFlags struct {
	nodes, nodesFile string
	user, keyFile    string
	// password (--password, deprecated: other users see it in ps) and
	// passwordFile (--password-file): sshPassword picks the password.
	password, passwordFile string
	sshPort                int
	strictHostKeys         bool
	knownHosts             string
}

// register declares the flags on f, with their defaults.
func (h *hostFlags) register(f *pflag.FlagSet) {
	f.StringVar(&h.nodes, "nodes", "", "hosts, comma separated (name or address, optional :port; docker:CONTAINER; docker:compose:PROJECT); none: local mode")
	f.StringVar(&h.nodesFile, "nodes-file", "", "file with one host per line (# comments and blank lines skipped)")
	f.StringVar(&h.user, "username", "root", "SSH user (sudo is used when it is not root)")
	f.StringVar(&h.keyFile, "ssh-private-key", "", "SSH private key file (default ~/.ssh/id_ed25519 and id_rsa; the SSH agent is tried too)")
	f.StringVar(&h.passwordFile, secret.PasswordFileFlag, "", "file whose first line is the SSH and sudo password (or set $"+secret.PasswordEnv+")")
	f.StringVar(&h.password, secret.PasswordFlag, "", "SSH and sudo password, visible to other users in ps: prefer --"+secret.PasswordFileFlag+" or $"+secret.PasswordEnv)
	f.IntVar(&h.sshPort, "ssh-port", 22, "SSH port for hosts given without one")
	f.BoolVar(&h.strictHostKeys, "strict-host-key-checking", true, "verify host keys against --known-hosts")
	f.StringVar(&h.knownHosts, "known-hosts", "", "known_hosts file (default ~/.ssh/known_hosts)")
}

// hosts checks the flags and returns the hosts they name, in order; none
// means local mode.
func (h hostFlags) hosts() ([]string, error) {
	if h.sshPort < 1 || h.sshPort > 65535 {
		return nil, usageErrorf("--ssh-port %d: want 1 to 65535", h.sshPort)
	}
	hosts, err := readNodes(h.nodes, h.nodesFile)
	if err != nil {
		return nil, err
	}
	for _, host := range hosts {
		if err := control.CheckHostName(host); err != nil {
			return nil, usageErrorf("%v", err)
		}
	}
	return hosts, noDuplicateHosts(hosts, h.sshPort)
}

// local reports whether the flags name no host: local mode.
func (h hostFlags) local() bool { return h.nodes == "" && h.nodesFile == "" }

// sshConfig is how to reach the hosts, with the password of
// sshPassword; warnings about the credentials (a key file others can read)
// go to warn. The SSH agent is always tried. Errors are usage errors.
func (h hostFlags) sshConfig(warn io.Writer) (control.SSHConfig, error) {
	password, err := h.sshPassword()
	if err != nil {
		return control.SSHConfig{}, err
	}
	cfg := control.SSHConfig{User: h.user, Port: h.sshPort, Password: password, Agent: true,
		InsecureIgnoreHostKey: !h.strictHostKeys, KnownHosts: h.knownHosts, Warn: warn}
	if h.keyFile != "" {
		cfg.KeyFiles = []string{h.keyFile}
	}
	return cfg, nil
}

// readNodes returns the hosts of --nodes or --nodes-file (one per line;
// blank lines and # comments are skipped).
func readNodes(list, file string) ([]string, error) {
	if list != "" && file != "" {
		return nil, usageErrorf("give --nodes or --nodes-file, not both")
	}
	var nodes []string
	if list != "" {
		for _, n := range strings.Split(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) == 0 {
			return nil, usageErrorf("--nodes %q names no host", list)
		}
		return nodes, nil
	}
	if file == "" {
		return nil, nil
	}
	f, err := inputfile.Open(file) // a regular file: never a FIFO that blocks
	if err != nil {
		return nil, usageErrorf("--nodes-file: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			nodes = append(nodes, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, usageErrorf("--nodes-file %s: %v", file, err)
	}
	if len(nodes) == 0 {
		return nil, usageErrorf("--nodes-file %s lists no host", file)
	}
	return nodes, nil
}

// noDuplicateHosts refuses a host given twice (with the default SSH port
// made explicit, so "a" and "a:22" are the same).
func noDuplicateHosts(hosts []string, port int) error {
	seen := map[string]bool{}
	for _, h := range hosts {
		key := h
		if _, _, err := net.SplitHostPort(h); err != nil {
			key = net.JoinHostPort(strings.Trim(h, "[]"), strconv.Itoa(port))
		}
		if seen[key] {
			return usageErrorf("host %s appears twice in the node list: give each host once", h)
		}
		seen[key] = true
	}
	return nil
}
