package testbed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Up makes the testbed cfg describes and returns its state once every
// host's sshd answers. The caller must be root and have the Missing
// requirements. Errors in cfg, a testbed already up in cfg.Dir and a subnet
// in use wrap ErrConfig and happen before anything is made; after that, a
// failure (or ctx ending) removes everything made so far, as Down would,
// before Up returns.
func Up(ctx context.Context, sys System, cfg Config) (State, error) {
	subnet, err := cfg.Validate()
	if err != nil {
		return State{}, err
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return State{}, fmt.Errorf("testbed directory: %w", err)
	}
	if _, err := LoadState(dir); !errors.Is(err, ErrNotUp) {
		if err != nil {
			return State{}, err
		}
		return State{}, configErrorf("a testbed is already up in %s: take it down first with `chaos testbed down --dir %s`", dir, cfg.Dir)
	}
	sshd, err := sys.LookPath("sshd")
	if err != nil {
		return State{}, &MissingError{Missing: []Requirement{{Command: "sshd", Package: "openssh-server"}}}
	}
	if err := checkSubnetFree(ctx, sys, subnet); err != nil {
		return State{}, err
	}
	madeDir, err := makeTestbedDir(dir)
	if err != nil {
		return State{}, err
	}
	st := plan(PrefixFor(dir), subnet, cfg.Hosts)
	st.MadeTestbedDir = madeDir
	if err := saveState(dir, st); err != nil {
		return State{}, err
	}
	if err := build(ctx, dir, sys, &st, cfg, sshd); err != nil {
		// Roll back even when ctx ended: that is what an interrupt asks for.
		if rerr := teardown(context.WithoutCancel(ctx), dir, sys, st); rerr != nil {
			err = errors.Join(err, fmt.Errorf("roll back (run `chaos testbed down --dir %s` to retry): %w", cfg.Dir, rerr))
		}
		return State{}, err
	}
	return st, nil
}

// build makes everything st plans, recording in the state file what it makes
// beyond the plan (firewall rule, mount points, pids) as it goes.
func build(ctx context.Context, dir string, sys System, st *State, cfg Config, sshd string) error {
	hostKeys, err := writeFiles(dir, *st, cfg.Rand)
	if err != nil {
		return err
	}
	if err := runAll(ctx, sys, bridgeCommands(*st)); err != nil {
		return fmt.Errorf("make bridge: %w", err)
	}
	if err := allowBridgedTraffic(ctx, dir, sys, st); err != nil {
		return err
	}
	for _, h := range st.Hosts {
		cmds, err := hostNetworkCommands(*st, h)
		if err != nil {
			return err
		}
		if err := runAll(ctx, sys, cmds); err != nil {
			return fmt.Errorf("make %s's network: %w", h.Name, err)
		}
	}
	if err := makeMountPoints(dir, sys, st); err != nil {
		return err
	}
	daemons, err := startHosts(dir, sys, st, sshd)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, dir, sys, st.Hosts, daemons, cfg.readyTimeout()); err != nil {
		return err
	}
	return writeInventory(dir, *st, hostKeys)
}

// allowBridgedTraffic inserts the firewall rule, recording it in the state
// file first. It goes in whatever the FORWARD chain holds now: a firewall
// that starts later (dockerd loads br_netfilter and sets FORWARD's policy
// to DROP) must not cut the hosts off each other in the middle of a run.
func allowBridgedTraffic(ctx context.Context, dir string, sys System, st *State) error {
	st.FirewallRule = firewallRule(st.Bridge)
	if err := saveState(dir, *st); err != nil {
		return err
	}
	argv := append([]string{"iptables", "-w", "5", "-I"}, st.FirewallRule...)
	if _, err := sys.Run(ctx, argv...); err != nil {
		return fmt.Errorf("let bridged traffic through the FORWARD chain: %w", err)
	}
	return nil
}

// makeTestbedDir creates dir if needed and reports whether it did.
func makeTestbedDir(dir string) (bool, error) {
	_, err := os.Stat(dir)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("testbed directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("make testbed directory: %w", err)
	}
	return true, nil
}
