package checker

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"chaos/history"
	"chaos/internal/jsonline"
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
// key (see registerBuilder).
func splitRegister(h history.History) (*registerHistory, error) {
	var b registerBuilder
	for i := range h {
		if err := b.add(&h[i]); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// registerBuilder splits a register history by key as its ops arrive, in
// history order, holding only the decoded operations and the invokes still
// in flight. Failed operations and reads of unknown outcome are dropped.
// Operations of unknown outcome (info, or open at the end) get a return
// time after the end of the history: porcupine then may place them
// anywhere after their invoke, including after everything else, which is
// how "it may take effect later, or never" is modelled. Each key's ops are
// in invoke order.
//
// An op whose f or value does not fit the register is an error (wrapping
// ErrMalformed) when it completes, or at finish if it never did; a failed
// one is dropped without a look at its value.
type registerBuilder struct {
	rh   registerHistory
	open map[history.Process]pendingReg
	last int64 // time of the last op added
}

// pendingReg is an invoke waiting for its completion.
type pendingReg struct {
	op  regOp
	key string
	err error // the invoke does not fit the register
}

func (b *registerBuilder) add(op *history.Op) error {
	b.last = op.Time
	switch {
	case op.Process.IsNemesis():
		b.rh.nemesis = append(b.rh.nemesis, *op)
	case op.Type == history.Invoke:
		p := pendingReg{op: regOp{process: op.Process, index: op.Index, call: op.Time}, key: op.Key}
		p.err = decodeInvoke(&p.op, op)
		if b.open == nil {
			b.open = make(map[history.Process]pendingReg)
		}
		b.open[op.Process] = p
	default:
		p, ok := b.open[op.Process]
		if !ok {
			return nil
		}
		delete(b.open, op.Process)
		return b.complete(p, op)
	}
	return nil
}

// complete records p, which ended with out, or is still open when out is
// nil.
func (b *registerBuilder) complete(p pendingReg, out *history.Op) error {
	b.rh.operations++
	if out != nil && out.Type == history.Fail {
		b.rh.failed++
		return nil
	}
	if p.err != nil {
		return p.err
	}
	op := p.op
	op.info = out == nil || out.Type == history.Info
	if out != nil {
		op.node = out.Node
		if !op.info {
			op.ret = out.Time
		}
		if err := decodeRead(&op, p.key, out); err != nil {
			return err
		}
	}
	if op.kind == regRead && op.info {
		b.rh.infoReads++
		return nil
	}
	if b.rh.keys == nil {
		b.rh.keys = make(map[string][]regOp)
	}
	b.rh.keys[p.key] = append(b.rh.keys[p.key], op)
	return nil
}

// finish records the operations still open, gives every op its deadline
// and returns the history.
func (b *registerBuilder) finish() (*registerHistory, error) {
	open := make([]pendingReg, 0, len(b.open))
	for _, p := range b.open {
		open = append(open, p)
	}
	slices.SortFunc(open, func(x, y pendingReg) int { return cmp.Compare(x.op.index, y.op.index) })
	for _, p := range open {
		if err := b.complete(p, nil); err != nil {
			return nil, err
		}
	}
	rh := &b.rh
	if rh.keys == nil {
		rh.keys = make(map[string][]regOp)
	}
	rh.infinity = b.last + 1
	for _, ops := range rh.keys {
		// Ops were added as they completed; the search wants invoke order.
		slices.SortFunc(ops, func(x, y regOp) int { return cmp.Compare(x.index, y.index) })
		for i := range ops {
			if ops[i].info {
				ops[i].ret = rh.infinity
			}
			ops[i].deadline = ops[i].ret
		}
	}
	return rh, nil
}

// malformed is the error for a register op of inv's index, f and key that
// does not fit the register.
func malformed(index int64, f, key, format string, args ...any) error {
	return fmt.Errorf("%w: op %d (%s on key %q): %s", ErrMalformed, index, f, key, fmt.Sprintf(format, args...))
}

// decodeInvoke fills op's kind and arguments from its invoke.
func decodeInvoke(op *regOp, inv *history.Op) error {
	bad := func(format string, args ...any) error { return malformed(inv.Index, inv.F, inv.Key, format, args...) }
	switch inv.F {
	case history.FRead:
		op.kind = regRead
	case history.FWrite:
		op.kind = regWrite
		v, err := decodeOptionalInt(inv.Value)
		if err != nil || !v.present {
			return bad("write value %s, want an integer", inv.Value)
		}
		op.arg = v.v
	case history.FCAS:
		op.kind = regCas
		from, to, err := casArgs(inv.Value)
		if err != nil {
			return bad("cas value %s, want %s", inv.Value, err)
		}
		op.arg, op.arg2 = from, to
	default:
		return bad("f %q is not a register operation (read, write or cas)", inv.F)
	}
	return nil
}

// decodeRead fills a read's value from its successful completion.
func decodeRead(op *regOp, key string, out *history.Op) error {
	if op.kind != regRead || out.Type != history.OK {
		return nil
	}
	v, err := decodeOptionalInt(out.Value)
	if err != nil {
		return malformed(op.index, history.FRead, key, "read returned %s, want an integer or null", out.Value)
	}
	op.read = v
	return nil
}

// decodeOptionalInt decodes an integer, or null/absent as "no value".
func decodeOptionalInt(raw json.RawMessage) (regValue, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return regValue{}, nil
	}
	s := jsonline.New(raw)
	if v, ok := s.Int(); ok && s.Done() {
		return regValue{v: v, present: true}, nil
	}
	return regValue{}, errors.New("not an integer")
}

// casArgs decodes a cas value, [expected, new]. The shape the recorder
// writes (two plain integers) is read directly; anything else goes through
// encoding/json, which also names what is wrong: "[expected, new]" or "two
// integers".
func casArgs(raw json.RawMessage) (from, to int64, err error) {
	s := jsonline.New(raw)
	s.Space()
	if s.Byte('[') {
		s.Space()
		from, ok1 := s.Int()
		s.Space()
		comma := s.Byte(',')
		s.Space()
		to, ok2 := s.Int()
		s.Space()
		if ok1 && comma && ok2 && s.Byte(']') {
			if s.Space(); s.Done() {
				return from, to, nil
			}
		}
	}
	var pair []json.Number
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return 0, 0, errors.New("[expected, new]")
	}
	from, err1 := strconv.ParseInt(pair[0].String(), 10, 64)
	to, err2 := strconv.ParseInt(pair[1].String(), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, errors.New("two integers")
	}
	return from, to, nil
}

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
