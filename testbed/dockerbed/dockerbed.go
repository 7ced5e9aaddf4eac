// Package dockerbed makes a testbed of Docker containers: hosts n1..nN for
// chaos to reach through the Docker Engine ("docker:NAME" hosts), with no
// SSH inside them.
//
// A testbed lives in a directory D. Up makes
//
//   - an image, unless one is given: a root file system imported offline
//     from local files (see BuildImage), tagged with the testbed's prefix;
//   - a bridge network of its own;
//   - containers PREFIX-n1..PREFIX-nN on that network, whose hostnames are
//     n1..nN, with what the fault families need: NET_ADMIN (partitions,
//     packet faults), SYS_ADMIN and /dev/fuse (the fault file system),
//     SYS_PTRACE (process clocks), and an init that reaps orphans (--init),
//     so that a killed node does not linger as a zombie;
//
// and writes D/nodes, one "docker:PREFIX-nK" per line, which `chaos run
// --nodes-file` takes as is. Before it creates anything it records what it
// is about to create in D/docker.json; Down removes exactly what that file
// names (and what carries the testbed's label), so it also cleans up after
// an Up that failed or was killed half-way. Every object is labelled
// chaos.testbed=PREFIX, PREFIX derived from D as testbed.PrefixFor does, so
// two testbeds never touch each other's objects.
//
// Everything goes through Engine, which the tests replace with a recording
// fake.
package dockerbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"chaos/internal/atomicfile"
	"chaos/testbed"
)

// StateFile is the docker testbed's state, in its directory.
const StateFile = "docker.json"

// MaxHosts bounds a testbed's size.
const MaxHosts = 50

// Config says what testbed Up makes.
type Config struct {
	// Dir holds the state and the nodes file.
	Dir string
	// Hosts is the number of containers, 1 to MaxHosts.
	Hosts int
	// Image is the containers' image; "" builds the default one (see
	// BuildImage), which Down removes again.
	Image string
}

// State is what Up made: what Down removes.
type State struct {
	Prefix  string `json:"prefix"`
	Network string `json:"network"`
	// Image is the containers' image; BuiltImage says Up built it.
	Image      string   `json:"image"`
	BuiltImage bool     `json:"built_image,omitempty"`
	Containers []string `json:"containers"`
}

// Label is the label key on every object of a testbed, its value the
// testbed's prefix.
const Label = "chaos.testbed"

// Up makes the testbed cfg describes and returns its state once every
// container runs. A bad cfg or a testbed already in cfg.Dir is an error
// before anything is made; after that, a failure (or ctx ending) removes
// everything made so far before Up returns.
func Up(ctx context.Context, e Engine, cfg Config) (State, error) {
	if cfg.Hosts < 1 || cfg.Hosts > MaxHosts {
		return State{}, fmt.Errorf("--hosts %d: want 1 to %d", cfg.Hosts, MaxHosts)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return State{}, fmt.Errorf("testbed directory: %w", err)
	}
	if has, err := hasTestbed(dir); err != nil || has {
		if err == nil {
			err = fmt.Errorf("a testbed is already up in %s: take it down first with `chaos testbed down --dir %s`", dir, cfg.Dir)
		}
		return State{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return State{}, fmt.Errorf("testbed directory: %w", err)
	}
	st := plan(testbed.PrefixFor(dir), cfg)
	if err := saveState(dir, st); err != nil {
		return State{}, err
	}
	if err := build(ctx, dir, e, st); err != nil {
		if rerr := teardown(context.WithoutCancel(ctx), e, st); rerr != nil {
			err = errors.Join(err, fmt.Errorf("roll back (run `chaos testbed down --dir %s` to retry): %w", cfg.Dir, rerr))
		} else {
			_ = os.Remove(filepath.Join(dir, StateFile))
		}
		return State{}, err
	}
	return st, nil
}

// plan names everything Up makes, before it makes any.
func plan(prefix string, cfg Config) State {
	st := State{Prefix: prefix, Network: prefix + "-net", Image: cfg.Image}
	if st.Image == "" {
		st.Image, st.BuiltImage = prefix+"-image:default", true
	}
	for i := 1; i <= cfg.Hosts; i++ {
		st.Containers = append(st.Containers, fmt.Sprintf("%s-n%d", prefix, i))
	}
	return st
}

// build makes the image, the network and the containers st names, and
// writes the nodes file.
func build(ctx context.Context, dir string, e Engine, st State) error {
	label := Label + "=" + st.Prefix
	if st.BuiltImage {
		if err := BuildImage(ctx, e, st.Image, label); err != nil {
			return err
		}
	}
	if _, err := e.Docker(ctx, nil, "network", "create", "--driver", "bridge", "--label", label, st.Network); err != nil {
		return fmt.Errorf("create network %s: %w", st.Network, err)
	}
	for i, c := range st.Containers {
		args := []string{"run", "-d", "--name", c, "--hostname", fmt.Sprintf("n%d", i+1), "--network", st.Network,
			"--label", label, "--init", "--restart", "no",
			"--cap-add", "NET_ADMIN", "--cap-add", "SYS_ADMIN", "--cap-add", "SYS_PTRACE", "--device", "/dev/fuse",
			st.Image, "sleep", "2147483647"}
		if _, err := e.Docker(ctx, nil, args...); err != nil {
			return fmt.Errorf("start container %s: %w", c, err)
		}
	}
	var nodes strings.Builder
	nodes.WriteString("# chaos testbed up --docker: one container per line\n")
	for _, c := range st.Containers {
		nodes.WriteString("docker:" + c + "\n")
	}
	return atomicfile.WriteFile(filepath.Join(dir, testbed.NodesFile), []byte(nodes.String()), 0o644)
}

// Down removes the testbed in dir: its containers, network and built image
// (and whatever else carries its label), then its state and nodes files.
// No testbed there is testbed.ErrNotUp.
func Down(ctx context.Context, e Engine, dir string) (State, error) {
	st, err := LoadState(dir)
	if err != nil {
		return st, err
	}
	if err := teardown(ctx, e, st); err != nil {
		return st, err
	}
	for _, f := range []string{testbed.NodesFile, StateFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return st, err
		}
	}
	return st, nil
}

// teardown removes what st names, and every container and network with
// its label, tolerating what is already gone.
func teardown(ctx context.Context, e Engine, st State) error {
	filter := "label=" + Label + "=" + st.Prefix
	containers := append([]string(nil), st.Containers...)
	if out, err := e.Docker(ctx, nil, "ps", "-a", "--filter", filter, "--format", "{{.Names}}"); err == nil {
		for _, name := range strings.Fields(string(out)) {
			if !slices.Contains(containers, name) {
				containers = append(containers, name)
			}
		}
	}
	var errs []error
	if _, err := e.Docker(ctx, nil, append([]string{"rm", "-f", "--volumes"}, containers...)...); err != nil && !isGone(err) {
		errs = append(errs, fmt.Errorf("remove containers: %w", err))
	}
	if _, err := e.Docker(ctx, nil, "network", "rm", st.Network); err != nil && !isGone(err) {
		errs = append(errs, fmt.Errorf("remove network %s: %w", st.Network, err))
	}
	if st.BuiltImage {
		if _, err := e.Docker(ctx, nil, "image", "rm", "-f", st.Image); err != nil && !isGone(err) {
			errs = append(errs, fmt.Errorf("remove image %s: %w", st.Image, err))
		}
	}
	return errors.Join(errs...)
}

// isGone says whether a docker error means the object does not exist.
func isGone(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "no such") || strings.Contains(msg, "not found")
}

// hasTestbed says whether dir holds a testbed of either kind.
func hasTestbed(dir string) (bool, error) {
	for _, f := range []string{StateFile, testbed.StateFile} {
		_, err := os.Stat(filepath.Join(dir, f))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

// LoadState reads dir's state; testbed.ErrNotUp when there is none.
func LoadState(dir string) (State, error) {
	path := filepath.Join(dir, StateFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, fmt.Errorf("%w in %s", testbed.ErrNotUp, dir)
	}
	if err != nil {
		return State{}, fmt.Errorf("read docker testbed state: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("read docker testbed state %s: %w", path, err)
	}
	return st, nil
}

// saveState writes st to dir's state file atomically.
func saveState(dir string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, StateFile), append(b, '\n'), 0o644)
}

// States are the testbed's containers' states ("running", "exited",
// "paused", ...) by name; a container that is gone is absent.
func States(ctx context.Context, e Engine, st State) (map[string]string, error) {
	out, err := e.Docker(ctx, nil, "ps", "-a", "--filter", "label="+Label+"="+st.Prefix, "--format", "{{.Names}} {{.State}}")
	if err != nil {
		return nil, err
	}
	states := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if name, state, ok := strings.Cut(line, " "); ok {
			states[name] = state
		}
	}
	return states, nil
}
