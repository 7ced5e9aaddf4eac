package control

import (
	"context"
	"fmt"
)

// Dialer reaches hosts of every kind: "docker:NAME" through the Docker
// Engine, every other over SSH. It is safe for concurrent use.
type Dialer struct {
	docker DockerConfig
	ssh    *SSHDialer // nil when no host is reached over SSH
}

// NewDialer checks hosts' names and, when some host is reached over SSH,
// loads sshCfg's keys and known_hosts (NewSSHDialer): a cluster of
// containers needs no SSH configuration. Its errors are configuration
// errors: a name Docker cannot have given, an unreadable key.
func NewDialer(hosts []string, sshCfg SSHConfig, docker DockerConfig) (*Dialer, error) {
	d := &Dialer{docker: docker}
	needSSH := false
	for _, h := range hosts {
		_, isContainer, err := ContainerName(h)
		if err != nil {
			return nil, err
		}
		needSSH = needSSH || !isContainer
	}
	if needSSH {
		ssh, err := NewSSHDialer(sshCfg)
		if err != nil {
			return nil, err
		}
		d.ssh = ssh
	}
	return d, nil
}

// Dial reaches host, one of those NewDialer was given: its Remote is named
// host in errors.
func (d *Dialer) Dial(ctx context.Context, host string) (Remote, error) {
	name, isContainer, err := ContainerName(host)
	switch {
	case err != nil:
		return nil, err
	case isContainer:
		return DialDocker(ctx, host, name, d.docker)
	case d.ssh == nil:
		return nil, fmt.Errorf("%s: not among the hosts the dialer was made for", host)
	}
	return d.ssh.Dial(ctx, host)
}

// Addressed is a Remote whose host is reached by the others at an address
// its name does not say: a container, at its address on its network.
type Addressed interface {
	Remote
	// Addr is the host's IP address, "" when it has none.
	Addr() string
}

// Via says how r runs commands: "local", "ssh", "docker-exec" or
// "docker-nsenter" (see DockerExec, DockerNsenter); "" for a Remote of
// another package (a test's fake).
func Via(r Remote) string {
	switch r := r.(type) {
	case *local:
		return "local"
	case *sshRemote:
		return "ssh"
	case *dockerRemote:
		return "docker-" + r.mode
	}
	return ""
}
