package listappend

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDifferential compares Check with a brute-force search on many small
// random histories (at most 5 transactions on at most 2 keys), valid and
// corrupted. The brute force tries every subset of the Info transactions
// with every order of it and the OK ones (Fail ones never commit), and
// accepts when some order replays every OK read exactly (and, for strict
// serializability, puts T1 before T2 whenever T1 completed before T2 was
// invoked).
//
// What Check guarantees, and all this test asserts:
//
//   - Soundness: when Check says Invalid, no serialization exists. Every
//     anomaly it reports is impossible in a serial execution (the random
//     histories never append a value twice, the only anomaly that breaks
//     the input contract without breaking serializability).
//   - Completeness when every version is seen: when every append of every
//     transaction that must have committed (OK ones, and Info ones some
//     read saw) appears in some OK read, and Check says Valid, a
//     serialization exists. Without that condition Check may say Valid
//     for a history that is not serializable: a cycle through a version
//     nobody read is invisible to it (Elle's inference is the same).
//
// Unknown verdicts are not compared.
func TestDifferential(t *testing.T) {
	const histories = 6000
	seed := uint64(43)
	if s, err := strconv.ParseUint(os.Getenv("LISTAPPEND_SEED"), 10, 64); err == nil {
		seed = s // explore other histories, or replay a failure
	}
	t.Logf("seed %d (set LISTAPPEND_SEED to run others)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	counts := map[string]int{}
	for i := range histories {
		h := randomHistory(rng)
		for _, m := range []Model{Serializable, StrictSerializable} {
			res := check(t, h, m)
			serial := bruteForce(h, m == StrictSerializable)
			counts[string(m)+"/"+res.Valid.String()]++
			switch {
			case res.Valid == Invalid:
				require.False(t, serial, "history %d (seed %d) under %s: Check found %s but it is serializable:\n%s",
					i, seed, m, explainAll(res), render(h))
			case res.Valid == Valid && allSeen(h):
				counts[string(m)+"/complete"]++
				require.True(t, serial, "history %d (seed %d) under %s: Check says valid, brute force finds no order:\n%s",
					i, seed, m, render(h))
			}
		}
	}
	t.Logf("verdicts: %v", counts)
	// The comparison is only worth something if both sides came up often.
	for _, k := range []string{"serializable/true", "serializable/false", "serializable/complete", "strict-serializable/false"} {
		require.Greater(t, counts[k], histories/20, k)
	}
}

// randomHistory returns a small random history: transactions of 1 to 3
// micro-operations on keys x and y, values unique per key, run in a random
// serial order that fills in their reads and times, then, half the time,
// corrupted (a read changed, or the times shuffled).
func randomHistory(rng *rand.Rand) []Txn {
	keys := []string{"x", "y"}[:1+rng.IntN(2)]
	next := map[string]int64{}
	h := make([]Txn, 1+rng.IntN(5))
	for i := range h {
		h[i] = Txn{Index: i, Process: rng.IntN(3), Type: []Outcome{OK, OK, OK, OK, Info, Fail}[rng.IntN(6)]}
		for range 1 + rng.IntN(3) {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(2) == 0 {
				next[k]++
				h[i].Ops = append(h[i].Ops, ap(k, next[k]))
			} else {
				h[i].Ops = append(h[i].Ops, UnknownRead(k))
			}
		}
	}
	runSerially(rng, h)
	if rng.IntN(2) == 0 {
		corrupt(rng, h)
	}
	return h
}

// runSerially runs h's transactions in a random order (Fail ones and, at
// random, Info ones taking no effect), filling in the reads of OK ones, and
// gives each an interval around its place in that order.
func runSerially(rng *rand.Rand, h []Txn) {
	state := map[string][]int64{}
	for pos, i := range rng.Perm(len(h)) {
		t := &h[i]
		point := int64(pos+1) * 10
		t.Invoke, t.Complete = point-rng.Int64N(25), point+rng.Int64N(25)
		if t.Type == Fail || (t.Type == Info && rng.IntN(2) == 0) {
			continue
		}
		for j, op := range t.Ops {
			if op.F == FAppend {
				state[op.Key] = append(slices.Clone(state[op.Key]), op.Value)
			} else if t.Type == OK {
				t.Ops[j] = ReadOp(op.Key, state[op.Key]...)
			}
		}
	}
}

// corrupt changes one known read of h, or shuffles h's intervals.
func corrupt(rng *rand.Rand, h []Txn) {
	var reads []*MicroOp
	for i := range h {
		for j := range h[i].Ops {
			if h[i].Ops[j].Known {
				reads = append(reads, &h[i].Ops[j])
			}
		}
	}
	if len(reads) == 0 || rng.IntN(5) == 0 {
		for i := range h {
			j := rng.IntN(len(h))
			h[i].Invoke, h[j].Invoke = h[j].Invoke, h[i].Invoke
			h[i].Complete = max(h[i].Complete, h[i].Invoke)
			h[j].Complete = max(h[j].Complete, h[j].Invoke)
		}
		return
	}
	op := reads[rng.IntN(len(reads))]
	l := slices.Clone(op.List)
	switch rng.IntN(5) {
	case 0: // drop the last value
		if len(l) > 0 {
			l = l[:len(l)-1]
		}
	case 1: // drop a random value
		if len(l) > 0 {
			i := rng.IntN(len(l))
			l = slices.Delete(l, i, i+1)
		}
	case 2: // add a value some transaction appended
		l = append(l, 1+rng.Int64N(3))
	case 3: // swap two values
		if len(l) > 1 {
			a, b := rng.IntN(len(l)), rng.IntN(len(l))
			l[a], l[b] = l[b], l[a]
		}
	default: // read nothing
		l = nil
	}
	op.List = l
}

// bruteForce reports whether some subset of the Info transactions, with
// all OK ones, has an order replaying every OK read (honouring realtime
// order when asked).
func bruteForce(h []Txn, realtime bool) bool {
	var must, may []Txn
	for _, t := range h {
		switch t.Type {
		case OK:
			must = append(must, t)
		case Info:
			may = append(may, t)
		}
	}
	for subset := 0; subset < 1<<len(may); subset++ {
		set := slices.Clone(must)
		for i, t := range may {
			if subset&(1<<i) != 0 {
				set = append(set, t)
			}
		}
		if someOrder(set, 0, realtime) {
			return true
		}
	}
	return false
}

// someOrder reports whether some permutation of set[k:] after set[:k]
// replays (Heap-style recursion by swapping).
func someOrder(set []Txn, k int, realtime bool) bool {
	if k == len(set) {
		return replays(set, realtime)
	}
	for i := k; i < len(set); i++ {
		set[k], set[i] = set[i], set[k]
		if someOrder(set, k+1, realtime) {
			set[k], set[i] = set[i], set[k]
			return true
		}
		set[k], set[i] = set[i], set[k]
	}
	return false
}

// replays reports whether running order serially gives every OK read its
// recorded list, and, when realtime, whether no transaction comes after
// one invoked after it completed.
func replays(order []Txn, realtime bool) bool {
	for i := range order {
		for j := i + 1; realtime && j < len(order); j++ {
			if order[j].Type == OK && order[j].Complete < order[i].Invoke {
				return false
			}
		}
	}
	state := map[string][]int64{}
	for _, t := range order {
		for _, op := range t.Ops {
			switch {
			case op.F == FAppend:
				state[op.Key] = append(slices.Clone(state[op.Key]), op.Value)
			case t.Type == OK && op.Known && !slices.Equal(op.List, state[op.Key]):
				return false
			}
		}
	}
	return true
}

// allSeen reports whether every append of every transaction that must
// have committed (OK, or Info with an append some OK read shows) appears
// in some OK read.
func allSeen(h []Txn) bool {
	seen := map[kvName]bool{}
	for _, t := range h {
		for _, op := range t.Ops {
			if t.Type == OK && op.Known {
				for _, v := range op.List {
					seen[kvName{op.Key, v}] = true
				}
			}
		}
	}
	for _, t := range h {
		committed := t.Type == OK
		for _, op := range t.Ops {
			committed = committed || (t.Type == Info && op.F == FAppend && seen[kvName{op.Key, op.Value}])
		}
		for _, op := range t.Ops {
			if committed && op.F == FAppend && !seen[kvName{op.Key, op.Value}] {
				return false
			}
		}
	}
	return true
}

// kvName is a key and a value.
type kvName struct {
	key string
	val int64
}

// render prints a history for a failure message.
func render(h []Txn) string {
	s := ""
	for _, t := range h {
		s += "\n" + renderTxn(t)
	}
	return s
}

// renderTxn prints one transaction.
func renderTxn(t Txn) string {
	s := "T" + itoa(int64(t.Index)) + " " + t.Type.String() + " [" + itoa(t.Invoke) + "," + itoa(t.Complete) + "] p" + itoa(int64(t.Process)) + ":"
	for _, op := range t.Ops {
		s += " " + op.F + " " + op.Key
		if op.F == FAppend {
			s += " " + itoa(op.Value)
		} else if op.Known {
			s += " ["
			for i, v := range op.List {
				if i > 0 {
					s += " "
				}
				s += itoa(v)
			}
			s += "]"
		} else {
			s += " ?"
		}
	}
	return s
}
