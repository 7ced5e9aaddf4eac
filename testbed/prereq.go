package testbed

import (
	"context"
	"fmt"
	"strings"
)

// Requirement is a program the testbed runs and the Debian package that
// provides it.
type Requirement struct {
	Command string
	Package string
}

// requirements are the programs a testbed needs: ip makes the network, mount
// the hosts' private directories, sshd serves each host, and iptables is
// what the partition faults run on the hosts (and what Up uses when the
// machine filters bridged traffic).
func requirements() []Requirement {
	return []Requirement{
		{Command: "ip", Package: "iproute2"},
		{Command: "mount", Package: "mount"},
		{Command: "sshd", Package: "openssh-server"},
		{Command: "iptables", Package: "iptables"},
	}
}

// Missing returns the requirements sys does not have, in a fixed order.
func Missing(sys System) []Requirement {
	var missing []Requirement
	for _, r := range requirements() {
		if _, err := sys.LookPath(r.Command); err != nil {
			missing = append(missing, r)
		}
	}
	return missing
}

// MissingError reports missing requirements with the command that installs
// them.
type MissingError struct {
	Missing []Requirement
}

func (e *MissingError) Error() string {
	var what []string
	for _, r := range e.Missing {
		what = append(what, fmt.Sprintf("%s (package %s)", r.Command, r.Package))
	}
	return fmt.Sprintf("the testbed needs %s: install with `%s`, or give --install-deps",
		strings.Join(what, ", "), strings.Join(installCommand(e.Missing), " "))
}

// Install installs the packages of missing with apt-get, as the error
// message says to.
func Install(ctx context.Context, sys System, missing []Requirement) error {
	if _, err := sys.Run(ctx, "apt-get", "update"); err != nil {
		return fmt.Errorf("install testbed requirements: %w", err)
	}
	argv := append([]string{"env", "DEBIAN_FRONTEND=noninteractive"}, installCommand(missing)...)
	if _, err := sys.Run(ctx, argv...); err != nil {
		return fmt.Errorf("install testbed requirements: %w", err)
	}
	return nil
}

// installCommand is the apt-get command line that installs missing.
func installCommand(missing []Requirement) []string {
	argv := []string{"apt-get", "install", "-y"}
	for _, r := range missing {
		argv = append(argv, r.Package)
	}
	return argv
}
