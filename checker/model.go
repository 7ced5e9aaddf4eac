package checker

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// registerModel is the sequential specification of one register (one key;
// the history is split by key before the search, so the model never sees
// two keys). The state is a regValue; an operation's input is its *regOp,
// which carries what it returned, so outputs are unused.
//
//   - read: legal when it returned the current value (nil for a key never
//     written).
//   - write: always legal; sets the value.
//   - cas [from, to], successful: legal when the value is from (a key never
//     written holds no value, so a cas on it cannot succeed); sets to.
//   - write or cas of unknown outcome: always legal; acts like its
//     successful self if it takes effect here. Placing it after everything
//     else models "it never took effect".
//
// Failed operations never reach the model: they certainly did not happen.
func registerModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return regValue{} },
		Step: func(state, input, _ any) (bool, any) {
			return step(state.(regValue), input.(*regOp))
		},
		Hash: func(state any) uint64 {
			s := state.(regValue)
			if !s.present {
				return 0x9e3779b97f4a7c15
			}
			return uint64(s.v)
		},
		DescribeOperation: func(input, _ any) string { return input.(*regOp).String() },
		DescribeState:     func(state any) string { return state.(regValue).String() },
		DescribeOperationMetadata: func(metadata any) string {
			if op, ok := metadata.(*regOp); ok {
				return op.metadata()
			}
			return ""
		},
	}
}

// step applies op to the register holding s.
func step(s regValue, op *regOp) (bool, regValue) {
	switch op.kind {
	case regRead:
		return op.read == s, s
	case regWrite:
		return true, regValue{v: op.arg, present: true}
	default: // regCas
		matches := s.present && s.v == op.arg
		if matches {
			return true, regValue{v: op.arg2, present: true}
		}
		return op.info, s
	}
}

// String describes op for visualizations and explanations.
func (op *regOp) String() string {
	var s string
	switch op.kind {
	case regRead:
		s = "read → " + op.read.String()
	case regWrite:
		s = fmt.Sprintf("write %d", op.arg)
	default:
		s = fmt.Sprintf("cas %d→%d", op.arg, op.arg2)
	}
	if op.info {
		s += " (outcome unknown)"
	}
	return s
}

// metadata says where op came from, for the visualization's tooltip.
func (op *regOp) metadata() string {
	s := fmt.Sprintf("process %v, history index %d", op.process, op.index)
	if op.node != "" {
		s += ", node " + op.node
	}
	return s
}
