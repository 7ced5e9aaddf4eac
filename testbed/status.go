package testbed

import (
	"context"
	"net"
	"path/filepath"
	"strings"
)

// HostStatus is how one host is doing.
type HostStatus struct {
	Host
	// Running says whether the host's init (sshd) is alive.
	Running bool
	// Banner is what its sshd answered on port 22, empty if nothing.
	Banner string
	// Err says why there is no banner.
	Err error
}

// Healthy says whether the host runs and its sshd answers.
func (s HostStatus) Healthy() bool {
	return s.Running && strings.HasPrefix(s.Banner, "SSH-")
}

// Status reports on every host of the testbed in dir; ErrNotUp when there
// is none.
func Status(ctx context.Context, sys System, dir string) (State, []HostStatus, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return State{}, nil, err
	}
	st, err := LoadState(dir)
	if err != nil {
		return State{}, nil, err
	}
	statuses := make([]HostStatus, 0, len(st.Hosts))
	for _, h := range st.Hosts {
		s := HostStatus{Host: h, Running: running(sys, h)}
		s.Banner, s.Err = sys.SSHBanner(ctx, net.JoinHostPort(h.Addr, sshPort), bannerTimeout)
		statuses = append(statuses, s)
	}
	return st, statuses, nil
}
