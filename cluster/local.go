package cluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"chaos/control"
	"chaos/db"
)

// Local mode: the nodes run as processes on this machine, one per
// loopback address 127.0.0.11 .. 127.0.0.15, controlled without SSH.

// MaxLocalNodes is how many nodes local mode can run.
const MaxLocalNodes = 5

// LocalAddrs are the addresses of local mode's first n nodes, 127.0.0.11
// on (docs/FORMATS.md); all five when n is not within 1 and
// MaxLocalNodes.
func LocalAddrs(n int) []string {
	if n < 1 || n > MaxLocalNodes {
		n = MaxLocalNodes
	}
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("127.0.0.%d", 11+i)
	}
	return addrs
}

// lockLocalMode takes the lock that keeps two local-mode clusters on one
// machine from driving the same nodes.
func lockLocalMode(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "run.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another chaos run is using local mode on this machine (%s is locked); wait for it or stop it", dir)
	}
	return f, nil
}

// LocalDataDir is where local mode's nodes keep their data and pidfiles:
// a fixed place, so `chaos heal` finds them after a controller crash.
// It is per user, so runs of different users do not share it. It lies in
// a directory every user may write to (os.TempDir), so it is used only
// through PrepareLocalDataDir, which refuses one another user made.
func LocalDataDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("chaos-local-%d", os.Getuid()))
}

// LocalLayout is where local mode's nodes keep their binaries and data.
func LocalLayout() db.Layout {
	dir := LocalDataDir()
	return db.Layout{BinDir: filepath.Join(dir, "bin"), DataDir: dir}
}

// Nodes names the hosts n1, n2, ... in the order given, each bound to its
// host's address (the host without an SSH port or IPv6 brackets). No hosts
// means local mode's five nodes. Every command names nodes this way, so a
// node is the same node to run, heal and the store.
func Nodes(hosts []string) []db.Node {
	if len(hosts) == 0 {
		hosts = LocalAddrs(MaxLocalNodes)
	}
	nodes := make([]db.Node, len(hosts))
	for i, h := range hosts {
		addr := h
		if name, ok, _ := control.ContainerName(h); ok {
			addr = name // until the container's address is known (Connect)
		} else if host, _, err := net.SplitHostPort(h); err == nil {
			addr = host
		}
		nodes[i] = db.Node{Name: fmt.Sprintf("n%d", i+1), Addr: strings.Trim(addr, "[]")}
	}
	return nodes
}
