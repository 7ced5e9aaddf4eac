package listappend

import (
	"fmt"
	"math/rand/v2"
)

// Shape of generated histories; see Generate.
const (
	genOps         = 4  // micro-operations per transaction
	genActiveKeys  = 10 // keys in use at any time
	genReadOnlyPct = 25 // percent of transactions that only read
	genFailPct     = 2  // percent that fail (and so take no effect)
	genInfoPct     = 1  // percent whose outcome is unknown (half take effect)
)

// genKey is a key in use: its name, the list it holds, and the next value
// to append to it.
type genKey struct {
	name string
	list []int64
	next int64
}

// genSlot is one client: its current process id and transaction, and how
// far that transaction got (0 idle, 1 invoked, 2 executed).
type genSlot struct {
	process int
	txn     int
	phase   int
}

// generator is the state of one Generate.
type generator struct {
	rng         *rand.Rand
	out         []Txn
	keys        []genKey
	made        int // keys created so far, to name new ones
	retire      int
	now         int64
	nextProcess int
}

// Generate returns a valid (strict-serializable) list-append history of
// txns transactions, run by processes concurrent clients, deterministic in
// seed.
//
// It simulates a serial execution with overlapping transactions: at each
// tick a random client moves one step: it invokes a new transaction, or
// runs its invoked one atomically (its place in the serial order), or
// completes its run one. So every transaction takes effect between its
// invocation and completion, and the history is strict-serializable.
// Transactions have 4 micro-operations on 10 keys in use; a quarter only
// read, the rest append or read at random. A key is retired after
// keysRetiredAfter appends (a new key takes its place), which keeps reads
// short. About 2% of transactions fail and 1% end with an unknown outcome
// (half of those took effect); a client whose transaction's outcome is
// unknown continues as a new process, as in Jepsen. Reads of committed
// transactions share the key's backing array, so a history of a million
// transactions stays small.
func Generate(seed uint64, txns, processes, keysRetiredAfter int) []Txn {
	g := &generator{
		rng:         rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		out:         make([]Txn, 0, txns),
		retire:      max(keysRetiredAfter, 1),
		nextProcess: processes,
	}
	for range genActiveKeys {
		g.keys = append(g.keys, g.newKey())
	}
	slots := make([]genSlot, max(processes, 1))
	for i := range slots {
		slots[i].process = i
	}
	busy := 0
	for len(g.out) < txns || busy > 0 {
		g.now += 1 + g.rng.Int64N(3)
		s := &slots[g.rng.IntN(len(slots))]
		switch s.phase {
		case 0:
			if len(g.out) == txns {
				continue
			}
			s.txn, s.phase = len(g.out), 1
			g.out = append(g.out, Txn{Index: s.txn, Process: s.process, Invoke: g.now})
			busy++
		case 1:
			g.execute(&g.out[s.txn])
			s.phase = 2
		default:
			g.out[s.txn].Complete = g.now
			if g.out[s.txn].Type == Info {
				s.process = g.nextProcess
				g.nextProcess++
			}
			s.phase = 0
			busy--
		}
	}
	return g.out
}

// newKey returns a fresh key.
func (g *generator) newKey() genKey {
	g.made++
	return genKey{name: fmt.Sprintf("k%d", g.made), list: make([]int64, 0, g.retire), next: 1}
}

// execute picks t's outcome and micro-operations and, unless it fails or
// is chosen not to take effect, applies them to the keys: this is t's
// place in the serial order.
func (g *generator) execute(t *Txn) {
	t.Type = OK
	switch p := g.rng.IntN(100); {
	case p < genFailPct:
		t.Type = Fail
	case p < genFailPct+genInfoPct:
		t.Type = Info
	}
	applied := t.Type == OK || (t.Type == Info && g.rng.IntN(2) == 0)
	readOnly := g.rng.IntN(100) < genReadOnlyPct
	t.Ops = make([]MicroOp, genOps)
	for i := range t.Ops {
		slot := g.rng.IntN(len(g.keys))
		k := &g.keys[slot]
		if readOnly || g.rng.IntN(2) == 0 {
			t.Ops[i] = UnknownRead(k.name)
			if t.Type == OK {
				t.Ops[i] = MicroOp{F: FRead, Key: k.name, List: k.list[:len(k.list):len(k.list)], Known: true}
			}
			continue
		}
		t.Ops[i] = AppendOp(k.name, k.next)
		if applied {
			k.list = append(k.list, k.next)
		}
		k.next++
		if k.next > int64(g.retire) {
			g.keys[slot] = g.newKey()
		}
	}
}
