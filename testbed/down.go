package testbed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// stopTimeout bounds the wait for killed hosts' processes to go.
const stopTimeout = 10 * time.Second

// Down removes the testbed in dir: every host's processes, network
// namespace and veth, the firewall rule, the bridge, the mount points and
// the files Up made, then the state file. It touches only objects the state
// file names (processes, by the testbed's name on their command line), and
// only those that exist, so it also undoes a partial Up.
// ErrNotUp when dir holds no testbed. On failure the state file stays, so
// Down can be run again.
func Down(ctx context.Context, sys System, dir string) (State, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return State{}, fmt.Errorf("testbed directory: %w", err)
	}
	st, err := LoadState(dir)
	if err != nil {
		return State{}, err
	}
	return st, teardown(ctx, dir, sys, st)
}

// teardown removes what st names, processes first (a network namespace with
// processes in it outlives its name), the state file last.
func teardown(ctx context.Context, dir string, sys System, st State) error {
	if err := stopHosts(ctx, sys, st.Prefix); err != nil {
		return err
	}
	netns, err := netnses(ctx, sys)
	if err != nil {
		return err
	}
	if err := removeNetwork(ctx, sys, st, netns); err != nil {
		return err
	}
	if err := removeMountPoints(sys, st, netns); err != nil {
		return err
	}
	return removeFiles(dir, st)
}

// stopHosts kills each host's init, which takes the host's whole PID
// namespace with it, and waits until every one is gone.
func stopHosts(ctx context.Context, sys System, prefix string) error {
	pids, err := hostProcesses(sys, prefix)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if err := sys.Kill(pid); err != nil {
			return fmt.Errorf("stop the testbed's hosts: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	for {
		if pids, err = hostProcesses(sys, prefix); err != nil || len(pids) == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stop the testbed's hosts: pids %v still run after SIGKILL: %w", pids, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// removeNetwork deletes the veths (which takes their peers in the
// namespaces along), the namespaces, the firewall rule and the bridge,
// each only if it exists.
func removeNetwork(ctx context.Context, sys System, st State, netns map[string]bool) error {
	links, err := links(ctx, sys)
	if err != nil {
		return err
	}
	var cmds [][]string
	for _, h := range st.Hosts {
		if links[h.Veth] {
			cmds = append(cmds, []string{"ip", "link", "del", h.Veth})
		}
	}
	for _, h := range st.Hosts {
		if netns[h.Netns] {
			cmds = append(cmds, []string{"ip", "netns", "del", h.Netns})
		}
	}
	if err := runAll(ctx, sys, cmds); err != nil {
		return err
	}
	if err := removeFirewallRule(ctx, sys, st.FirewallRule); err != nil {
		return err
	}
	if links[st.Bridge] {
		if _, err := sys.Run(ctx, "ip", "link", "del", st.Bridge); err != nil {
			return err
		}
	}
	return nil
}

// removeFirewallRule deletes the rule if Up inserted it and it is still
// there (iptables -C fails when it is not).
func removeFirewallRule(ctx context.Context, sys System, rule []string) error {
	if len(rule) == 0 {
		return nil
	}
	check := append([]string{"iptables", "-w", "5", "-C"}, rule...)
	if _, err := sys.Run(ctx, check...); err != nil {
		return nil
	}
	del := append([]string{"iptables", "-w", "5", "-D"}, rule...)
	if _, err := sys.Run(ctx, del...); err != nil {
		return fmt.Errorf("remove the testbed's FORWARD rule: %w", err)
	}
	return nil
}

// removeFiles removes the files Up wrote in dir, the state file last, and dir
// itself if Up made it and nothing else is in it.
func removeFiles(dir string, st State) error {
	if err := os.RemoveAll(filepath.Join(dir, hostsDir)); err != nil {
		return fmt.Errorf("remove hosts' files: %w", err)
	}
	for _, name := range []string{NodesFile, KnownHostsFile, KeyFile, pubKeyFile, authorizedKeysFile, StateFile + ".tmp", StateFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove testbed file: %w", err)
		}
	}
	if st.MadeTestbedDir {
		err := os.Remove(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("remove testbed directory: %w", err)
		}
	}
	return nil
}
