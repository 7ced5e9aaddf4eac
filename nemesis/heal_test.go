package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
)

// nodeHealer is a family whose Heal records the cluster it was given and
// fails on the nodes in failOn.
type nodeHealer struct {
	name   string
	failOn map[string]bool
	mu     sync.Mutex
	seen   []string // "<node>:<remotes>:<hooks>" per node healed
}

func (h *nodeHealer) Name() string                                            { return h.name }
func (h *nodeHealer) Available(context.Context, *Cluster) error               { return nil }
func (h *nodeHealer) Start(context.Context, *Cluster, *rand.Rand) (Op, error) { return Op{}, nil }
func (h *nodeHealer) Stop(context.Context, *Cluster) (Op, error)              { return Op{}, nil }

func (h *nodeHealer) Heal(_ context.Context, c *Cluster) error {
	var errs []error
	for _, n := range c.Nodes {
		h.mu.Lock()
		hooks := ""
		if hooked(c, n.Name) {
			hooks = "hooks"
		}
		h.seen = append(h.seen, n.Name+":"+strings.Join(keys(c.Remotes), ",")+":"+hooks)
		h.mu.Unlock()
		if h.failOn[n.Name] {
			errs = append(errs, errors.New(n.Name+": refused"))
		}
	}
	return errors.Join(errs...)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// HealAll runs every family, in order, past failures, and names the
// family of every error.
func TestHealAllCollectsEveryError(t *testing.T) {
	c, _, _ := goldenCluster(fiveNodes[:3])
	a := &nodeHealer{name: "partition", failOn: map[string]bool{"n1": true, "n3": true}}
	b := &nodeHealer{name: "packet"}
	d := &nodeHealer{name: "clock", failOn: map[string]bool{"n2": true}}
	err := HealAll(context.Background(), c, []Fault{a, b, d})
	require.EqualError(t, err, "heal partition: n1: refused\nn3: refused\nheal clock: n2: refused")
	for _, h := range []*nodeHealer{a, b, d} {
		assert.Len(t, h.seen, 3, "%s healed every node", h.name)
	}
	require.NoError(t, HealAll(context.Background(), c, []Fault{b}))
}

// HealEach heals each node alone, with its own Remote and hook address
// only, and tells the failures apart per node.
func TestHealEachSeparatesNodes(t *testing.T) {
	c, _, _ := goldenCluster(fiveNodes[:3])
	c.Hooks = &db.ChaosNodeHooks{Addrs: map[string]string{"n1": "10.77.0.11:7000", "n3": "10.77.0.13:7000"}}
	h := &nodeHealer{name: "pause", failOn: map[string]bool{"n2": true}}
	got := HealEach(context.Background(), c, []Fault{h, &Kill{}})
	require.Len(t, got, 3)
	for i, want := range []db.Node{fiveNodes[0], fiveNodes[1], fiveNodes[2]} {
		assert.Equal(t, want, got[i].Node)
	}
	assert.NoError(t, got[0].Err)
	assert.EqualError(t, got[1].Err, "heal pause: n2: refused")
	assert.NoError(t, got[2].Err)
	assert.Equal(t, []string{"n1:n1:hooks", "n2:n2:", "n3:n3:hooks"}, h.seen)
}

// The real families heal together: SIGCONT on every node and the clock
// hooks reset, and kill does nothing.
func TestHealAllWithTheRealFamilies(t *testing.T) {
	g, _, fakes := goldenCluster(fiveNodes[:2])
	hc, hooks := hookCluster(t, fiveNodes[:2])
	g.Hooks = hc.Hooks
	require.NoError(t, HealAll(context.Background(), g, []Fault{&Pause{}, &Kill{}, &Clock{}}))
	for _, n := range fiveNodes[:2] {
		cmds := ran(fakes[n.Name])
		require.Len(t, cmds, 1)
		assert.Contains(t, cmds[0], "kill -CONT")
		assert.Equal(t, []string{"DELETE /faults/clock"}, hooks[n.Name].take())
	}
}
