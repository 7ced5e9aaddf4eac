package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"chaos/control"
	"chaos/corrupt"
	"chaos/db"
)

// Corrupt is the corrupt family: on one node or a minority, while the node
// is down, one data file is damaged (a bit flipped, a range zeroed, or the
// file truncated: the newest WAL segment, the newest snapshot, or a random
// file; see package corrupt, run on the host as `chaos corrupt` through
// the fault file system, fsynced): op "start-corrupt". The nodes stay down
// until Stop starts them again (op "stop-corrupt").
//
// Never more than a minority is damaged: a node whose restart failed (a
// correct node refuses to start on damage it cannot repair) counts
// against the minority until a heal brings it back, and a node that came
// back counts until the system's states show it caught up (damagedSet;
// for the rest of the run on a system without states), so a correct
// system must survive every corruption this family makes.
//
// Corrupt is safe for concurrent use; calls are serialized.
type Corrupt struct {
	// Targets are the target kinds Start picks among: TargetOne or
	// TargetMinority; empty means both.
	Targets []Target
	// Files are the kinds of file Start damages, picked at random for each
	// node: corrupt.TargetWAL, corrupt.TargetSnapshot, corrupt.TargetRandom;
	// empty means all three (chaos run --corrupt-file).
	Files []string
	// Hows are the ways Start damages a file, picked at random for each
	// node: corrupt.HowFlip, corrupt.HowZero, corrupt.HowTruncate; empty
	// means all three (chaos run --corrupt-how).
	Hows []string
	// UpTimeout bounds the wait for a restarted node's process to answer
	// (default DefaultUpTimeout).
	UpTimeout time.Duration

	state   processState
	damaged damagedSet
}

// corruptPlan is what Start damages on one node, drawn before it acts.
type corruptPlan struct {
	target, how string
	seed        uint64
}

func (k *Corrupt) Name() string { return CorruptFamily }

// Available reports why the nodes' files cannot be damaged here: at least
// three nodes (a minority of one at least), and data directories served
// through the fault file system (see StorageAvailable), whose chaos
// binary damages them.
func (k *Corrupt) Available(ctx context.Context, c *Cluster) error {
	if len(c.Nodes) < 3 {
		return fmt.Errorf("%s: needs at least 3 nodes (damage stays on a minority), the cluster has %d", CorruptFamily, len(c.Nodes))
	}
	return storageAvailable(ctx, CorruptFamily, c)
}

// Start kills one node or a minority, chosen with rng among the nodes not
// left down by an earlier corruption, and damages a file of each.
func (k *Corrupt) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	s := &k.state
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.active) > 0 {
		return Op{}, fmt.Errorf("%s: a fault is active already on %v", CorruptFamily, names(s.active))
	}
	mode := pickTarget(k.targets(), rng)
	damaged := k.damaged.refresh(ctx, c)
	room := len(c.Nodes)/2 - len(s.failed) - len(damaged)
	if room <= 0 {
		return Op{}, fmt.Errorf("%s: %s: damaging another node would reach a majority",
			CorruptFamily, spared(names(s.failed), damaged))
	}
	pool := slices.DeleteFunc(slices.Clone(c.Nodes), func(n db.Node) bool {
		return slices.Contains(s.failed, n) || slices.Contains(damaged, n.Name)
	})
	size := 1
	if mode == TargetMinority {
		size = room
	}
	nodes := sample(pool, size, rng)
	plans := map[string]corruptPlan{}
	for _, n := range nodes {
		files, hows := orAll(k.Files, corrupt.Targets()), orAll(k.Hows, corrupt.Hows())
		plans[n.Name] = corruptPlan{target: files[rng.IntN(len(files))], how: hows[rng.IntN(len(hows))], seed: rng.Uint64()}
	}
	v := faultrec.Corrupt{Process: faultrec.Process{Nodes: names(nodes), Mode: string(mode)}, Files: map[string]faultrec.CorruptFile{}}
	s.active = nodes
	var mu sync.Mutex
	err := actOn(ctx, c, nodes, func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
		res, err := corruptNode(ctx, c, d, r, n, plans[n.Name])
		if err == nil {
			mu.Lock()
			defer mu.Unlock()
			v.Files[n.Name] = res
		}
		return err
	})
	return Op{F: "start-" + CorruptFamily, Value: v}, wrapFamily(CorruptFamily, err)
}

// targets are the kinds Start picks among.
func (k *Corrupt) targets() []Target {
	if len(k.Targets) == 0 {
		return []Target{TargetOne, TargetMinority}
	}
	return k.Targets
}

// orAll is some, or all when some is empty.
func orAll(some, all []string) []string {
	if len(some) == 0 {
		return all
	}
	return some
}

// corruptNode kills n and damages one of its data files as plan says.
func corruptNode(ctx context.Context, c *Cluster, d db.DB, r control.Remote, n db.Node, plan corruptPlan) (corrupt.Result, error) {
	m, err := storageMount(c, n)
	if err != nil {
		return corrupt.Result{}, err
	}
	if err := d.Kill(ctx, r, n); err != nil {
		return corrupt.Result{}, err
	}
	return corruptFile(ctx, r, m, plan)
}

// corruptFile runs `chaos corrupt` on m's data directory through r.
func corruptFile(ctx context.Context, r control.Remote, m db.StorageMount, plan corruptPlan) (corrupt.Result, error) {
	cmd := fmt.Sprintf("%s corrupt --dir %s --target %s --how %s --seed %d", control.ShellQuote(m.FS.Path),
		control.ShellQuote(m.Data), plan.target, plan.how, plan.seed)
	out, err := control.Output(ctx, r, cmd)
	if err != nil {
		return corrupt.Result{}, fmt.Errorf("%s: damage a data file: %w", m.Node, err)
	}
	var res corrupt.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return corrupt.Result{}, fmt.Errorf("%s: damage a data file: unexpected answer %q", m.Node, strings.TrimSpace(string(out)))
	}
	return res, nil
}

// Stop starts every damaged node again and waits until each answers; a
// node that does not (it refuses its damaged storage, say) stays down,
// counted against the minority, for Heal.
func (k *Corrupt) Stop(ctx context.Context, c *Cluster) (Op, error) {
	var mu sync.Mutex
	var back []db.Node
	op, err := k.state.stop(ctx, c, injection{family: CorruptFamily, f: "stop-" + CorruptFamily,
		act: func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
			if err := restartNode(ctx, c, r, n, k.UpTimeout); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			back = append(back, n)
			return nil
		}})
	k.damaged.add(back, sampleStates(ctx, c))
	return op, err
}

// spared says why nodes are spared: down after an earlier corruption, or
// damaged and not yet caught up.
func spared(down, damaged []string) string {
	var parts []string
	if len(down) > 0 {
		parts = append(parts, strings.Join(down, ", ")+" stay down after an earlier corruption")
	}
	if len(damaged) > 0 {
		parts = append(parts, strings.Join(damaged, ", ")+" came back damaged and are not yet caught up")
	}
	return strings.Join(parts, "; ")
}

// Heal restarts the nodes this Corrupt took down and did not bring back
// (see healDown); one that refuses its damaged storage again stays down,
// and the heal says so.
func (k *Corrupt) Heal(ctx context.Context, c *Cluster) error {
	return healDown(ctx, c, &k.state, CorruptFamily, k.UpTimeout)
}
