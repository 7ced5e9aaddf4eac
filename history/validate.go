package history

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error that reports an op breaking the rules
// of a history.
var ErrInvalid = errors.New("invalid history")

// Validator checks ops one at a time against the rules of a history (see the
// package documentation). The recorder and the parser share it, so a history
// the recorder wrote is always one the parser accepts. The zero value is
// ready to check a history from its first op.
type Validator struct {
	next     int64              // the index the next op must have
	lastTime int64              // time of the previous op
	open     map[Process]openOp // client processes with an op in flight
	retired  map[Process]int64  // process -> index of the info that retired it
}

type openOp struct {
	index  int64
	f, key string
}

// Add checks op as the next op of the history and, if it is acceptable,
// advances the validator past it. An error wraps ErrInvalid, says what is
// wrong in one line, and leaves the validator unchanged.
func (v *Validator) Add(op *Op) error {
	if err := v.check(op); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, err)
	}
	v.next++
	v.lastTime = op.Time
	if op.Process.IsNemesis() {
		return nil
	}
	if v.open == nil {
		v.open = make(map[Process]openOp)
		v.retired = make(map[Process]int64)
	}
	switch op.Type {
	case Invoke:
		v.open[op.Process] = openOp{index: op.Index, f: op.F, key: op.Key}
	case Info:
		v.retired[op.Process] = op.Index
		delete(v.open, op.Process)
	default:
		delete(v.open, op.Process)
	}
	return nil
}

// Open returns how many client operations are in flight.
func (v *Validator) Open() int { return len(v.open) }

// check says what, if anything, is wrong with op as the next op.
func (v *Validator) check(op *Op) error {
	switch {
	case op.Index != v.next:
		return fmt.Errorf("index %d, want %d (indexes run consecutively from 0)", op.Index, v.next)
	case op.Time < 0:
		return fmt.Errorf("time %d is negative", op.Time)
	case op.Time < v.lastTime:
		return fmt.Errorf("time %d is before the previous op's time %d (times never decrease)", op.Time, v.lastTime)
	case op.Type < Invoke || op.Type > Info:
		return fmt.Errorf("type %v is not invoke, ok, fail or info", op.Type)
	case op.Process < NemesisProcess:
		return fmt.Errorf("process %d is not a valid process", int64(op.Process))
	case op.F == "":
		return errors.New("f is empty")
	case op.Process.IsNemesis():
		if op.Type != Info {
			return fmt.Errorf("nemesis op %q has type %v, want info", op.F, op.Type)
		}
		return nil
	case op.Type == Invoke:
		return v.checkInvoke(op)
	default:
		return v.checkCompletion(op)
	}
}

func (v *Validator) checkInvoke(op *Op) error {
	if o, ok := v.open[op.Process]; ok {
		return fmt.Errorf("process %v invokes %q while its op %d (%q) is still open", op.Process, op.F, o.index, o.f)
	}
	if at, ok := v.retired[op.Process]; ok {
		return fmt.Errorf("process %v invokes %q but was retired by the info at index %d", op.Process, op.F, at)
	}
	return nil
}

func (v *Validator) checkCompletion(op *Op) error {
	o, ok := v.open[op.Process]
	if !ok {
		return fmt.Errorf("%v %q for process %v, which has no open invoke", op.Type, op.F, op.Process)
	}
	if op.F != o.f {
		return fmt.Errorf("%v for process %v has f %q but its invoke at index %d has f %q", op.Type, op.Process, op.F, o.index, o.f)
	}
	if op.Key != "" && op.Key != o.key {
		return fmt.Errorf("%v for process %v has key %q but its invoke at index %d has key %q", op.Type, op.Process, op.Key, o.index, o.key)
	}
	return nil
}

// Validate checks a whole history. The error names the first bad op.
func Validate(h History) error {
	var v Validator
	for i := range h {
		if err := v.Add(&h[i]); err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
	}
	return nil
}
