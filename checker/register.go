package checker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"chaos/history"
)

// ErrMalformed is wrapped by errors about input the checkers cannot use: ops
// whose f or value does not fit the workload (a write of a string, a cas
// without two integers, ...), or a results.json that is not JSON.
var ErrMalformed = errors.New("malformed input")

// regKind is what a register operation does.
type regKind uint8

const (
	regRead regKind = iota
	regWrite
	regCas
)

// regValue is the content of one register: an integer, or nothing when the
// key was never written.
type regValue struct {
	v       int64
	present bool
}

func (r regValue) String() string {
	if !r.present {
		return "nil"
	}
	return strconv.FormatInt(r.v, 10)
}

// regOp is one register operation, as the linearizability search sees it.
type regOp struct {
	kind    regKind
	info    bool // outcome unknown: info, or still open when the history ended
	process history.Process
	index   int64 // history index of the invoke
	node    string
	call    int64 // invoke time
	ret     int64 // completion time; for info ops, after the end of the history
	// deadline is the latest the op can take effect, as given to the search:
	// ret, or earlier for an info op proven to have happened (see prepare).
	deadline int64
	arg      int64    // write: the value; cas: the expected value
	arg2     int64    // cas: the new value
	read     regValue // read: the value returned
}

// writes returns the value op puts in the register if it takes effect.
func (op *regOp) writes() (int64, bool) {
	switch op.kind {
	case regWrite:
		return op.arg, true
	case regCas:
		return op.arg2, true
	}
	return 0, false
}

// observes returns the value op proves was in the register when it took
// effect: what a read returned, what a successful cas expected. Info ops
// prove nothing.
func (op *regOp) observes() (regValue, bool) {
	switch {
	case op.info:
		return regValue{}, false
	case op.kind == regRead:
		return op.read, true
	case op.kind == regCas:
		return regValue{v: op.arg, present: true}, true
	}
	return regValue{}, false
}

// registerHistory is a register workload history split by key.
type registerHistory struct {
	keys       map[string][]regOp
	failed     int   // failed ops: they certainly did not happen, so they are dropped
	infoReads  int   // reads with unknown outcome: they constrain nothing, so they are dropped
	infinity   int64 // later than every op of the history
	nemesis    []history.Op
	operations int
}

// splitRegister decodes the register operations of h and groups them by
// key. Failed operations and reads of unknown outcome are dropped here.
// Operations of unknown outcome (info, or open at the end) get a return time
// after the end of the history: porcupine then may place them anywhere after
// their invoke, including after everything else, which is how "it may take
// effect later, or never" is modelled.
func splitRegister(h history.History) (*registerHistory, error) {
	rh := &registerHistory{keys: make(map[string][]regOp), nemesis: h.Nemesis()}
	if len(h) > 0 {
		rh.infinity = h[len(h)-1].Time + 1
	}
	pairs := h.Pairs()
	// Size each key's slice first: a million ops appended key by key would
	// otherwise allocate about twice what they hold.
	perKey := map[string]int{}
	for _, p := range pairs {
		perKey[h[p.Invoke].Key]++
	}
	for k, n := range perKey {
		rh.keys[k] = make([]regOp, 0, n)
	}
	for _, p := range pairs {
		rh.operations++
		inv := &h[p.Invoke]
		outcome := h.Outcome(p)
		if outcome == history.Fail {
			rh.failed++
			continue
		}
		op := regOp{process: inv.Process, index: inv.Index, call: inv.Time, ret: rh.infinity, info: outcome == history.Info}
		var out *history.Op
		if !p.Open() {
			out = &h[p.Complete]
			op.node = out.Node
			if !op.info {
				op.ret = out.Time
			}
		}
		if err := decodeRegister(&op, inv, out); err != nil {
			return nil, err
		}
		if op.kind == regRead && op.info {
			rh.infoReads++
			continue
		}
		op.deadline = op.ret
		rh.keys[inv.Key] = append(rh.keys[inv.Key], op)
	}
	return rh, nil
}

// decodeRegister fills op's kind and values from the invoke and, for a
// completed op, its completion.
func decodeRegister(op *regOp, inv, out *history.Op) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: op %d (%s on key %q): %s", ErrMalformed, inv.Index, inv.F, inv.Key, fmt.Sprintf(format, args...))
	}
	switch inv.F {
	case history.FRead:
		op.kind = regRead
		if out == nil || out.Type != history.OK {
			return nil
		}
		v, err := decodeOptionalInt(out.Value)
		if err != nil {
			return bad("read returned %s, want an integer or null", out.Value)
		}
		op.read = v
	case history.FWrite:
		op.kind = regWrite
		v, err := decodeOptionalInt(inv.Value)
		if err != nil || !v.present {
			return bad("write value %s, want an integer", inv.Value)
		}
		op.arg = v.v
	case history.FCAS:
		op.kind = regCas
		var pair []json.Number
		if err := json.Unmarshal(inv.Value, &pair); err != nil || len(pair) != 2 {
			return bad("cas value %s, want [expected, new]", inv.Value)
		}
		from, err1 := strconv.ParseInt(pair[0].String(), 10, 64)
		to, err2 := strconv.ParseInt(pair[1].String(), 10, 64)
		if err1 != nil || err2 != nil {
			return bad("cas value %s, want two integers", inv.Value)
		}
		op.arg, op.arg2 = from, to
	default:
		return bad("f %q is not a register operation (read, write or cas)", inv.F)
	}
	return nil
}

// decodeOptionalInt decodes an integer, or null/absent as "no value".
func decodeOptionalInt(raw json.RawMessage) (regValue, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return regValue{}, nil
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return regValue{}, err
	}
	return regValue{v: v, present: true}, nil
}

// sortedKeys returns the keys of rh in order.
func (rh *registerHistory) sortedKeys() []string {
	keys := make([]string, 0, len(rh.keys))
	for k := range rh.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// unbounded reports whether op may take effect at any time after its
// invoke: an info op whose effect nothing proved.
func (op *regOp) unbounded() bool { return op.info && op.deadline == op.ret }
