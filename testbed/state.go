package testbed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"chaos/internal/atomicfile"
)

// Files of a testbed directory. The first three are the inventory `chaos run`
// takes; the others are the testbed's own.
const (
	NodesFile          = "nodes"       // one host address per line
	KeyFile            = "id_ed25519"  // the client's private key
	KnownHostsFile     = "known_hosts" // every host's key, by address
	StateFile          = "state.json"  // what up made; what down removes
	pubKeyFile         = "id_ed25519.pub"
	authorizedKeysFile = "authorized_keys"
	hostsDir           = "hosts" // hosts/nK: one host's keys, config, log and private directories
)

// ErrNotUp is returned by LoadState (and so by Down and Status) when the
// directory holds no testbed.
var ErrNotUp = errors.New("no testbed is up")

// State is what Up made, as recorded in D/state.json. Up writes it before
// creating the objects it names, so it may name objects that do not exist
// (yet); Down removes only those of its objects that do.
type State struct {
	// Prefix starts the name of every network object (see PrefixFor).
	Prefix string `json:"prefix"`
	// Subnet is the hosts' network, e.g. 10.77.0.0/24.
	Subnet string `json:"subnet"`
	// Bridge is the bridge's name; BridgeAddr its address in CIDR form.
	Bridge     string `json:"bridge"`
	BridgeAddr string `json:"bridge_addr"`
	// FirewallRule is the iptables rule (chain first) that Up inserted so
	// that bridged traffic passes the FORWARD chain whatever it filters,
	// now or later; nil in the state of a testbed made before it was
	// always inserted.
	FirewallRule []string `json:"firewall_rule,omitempty"`
	// MadeDirs are directories of the machine that Up created as mount
	// points, parents before children.
	MadeDirs []string `json:"made_dirs,omitempty"`
	// MadeTestbedDir says whether Up created the testbed directory itself.
	MadeTestbedDir bool `json:"made_testbed_dir"`
	// Hosts are n1..nN in order.
	Hosts []Host `json:"hosts"`
}

// Host is one testbed host.
type Host struct {
	Name  string `json:"name"`  // n1..nN, also its hostname
	Addr  string `json:"addr"`  // its address in the subnet
	Netns string `json:"netns"` // its network namespace
	Veth  string `json:"veth"`  // the machine's end of its veth pair
	// SSHDConfig is the path of its sshd_config as the host sees it (see
	// insideDir). It is on the command line of the host's process from
	// start to exit, which is how Status tells that process from one that
	// reused its pid.
	SSHDConfig string `json:"sshd_config"`
	// Pid is the host's init process (sshd, in the machine's PID
	// namespace); 0 until it is started. Status reports on it; Down finds
	// the hosts' processes by their command lines instead, so a process
	// whose pid an interrupted Up did not record is not left behind.
	Pid int `json:"pid,omitempty"`
}

// LoadState reads dir's state file; ErrNotUp when there is none.
func LoadState(dir string) (State, error) {
	path := filepath.Join(dir, StateFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, fmt.Errorf("%w in %s", ErrNotUp, dir)
	}
	if err != nil {
		return State{}, fmt.Errorf("read testbed state: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("read testbed state %s: %w", path, err)
	}
	return st, nil
}

// saveState writes st to dir's state file, replacing it atomically so a
// crash leaves the old or the new state, never a torn one.
func saveState(dir string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode testbed state: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, StateFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write testbed state: %w", err)
	}
	return nil
}
