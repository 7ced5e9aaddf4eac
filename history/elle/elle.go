// Package elle writes a list-append history in the format Elle (Jepsen's
// transactional checker) and Jepsen read: EDN, one operation map a line,
// as in a Jepsen test's history.edn. It lets a user cross-check chaos's
// list-append verdict with Elle's own.
package elle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"olympos.io/encoding/edn"

	"chaos/history"
)

// op is one operation as Jepsen's history holds it: {:index 0, :time 12,
// :process 3, :type :ok, :f :txn, :value [[:append "x" 1] [:r "y" [1 2]]]}.
type op struct {
	Index   int64       `edn:"index"`
	Time    int64       `edn:"time"`
	Process int64       `edn:"process"`
	Type    edn.Keyword `edn:"type"`
	F       edn.Keyword `edn:"f"`
	Value   []any       `edn:"value"`
}

// Writer writes a history's client transactions (f "txn") as EDN, one
// operation a line, in the order they are added. Micro-operations become
// [:append key value] and [:r key list] (nil for a read not yet done, as
// Jepsen writes it); keys stay strings, values integers. The nemesis's ops
// and other workloads' are left out (Elle reads only transactions).
type Writer struct {
	bw  *bufio.Writer
	enc *edn.Encoder
	err error // the first error; once set, Add does nothing
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	return &Writer{bw: bw, enc: edn.NewEncoder(bw)}
}

// Add writes o if it is a client transaction. An op whose value is not a
// list of [f, key, value] micro-operations ends the writing with an error
// naming its index, which Close returns.
func (w *Writer) Add(o *history.Op) {
	if w.err != nil || o.Process.IsNemesis() || o.F != history.FTxn {
		return
	}
	value, err := microOps(o.Value)
	if err == nil {
		err = w.enc.Encode(op{Index: o.Index, Time: o.Time, Process: int64(o.Process), Type: edn.Keyword(o.Type.String()),
			F: edn.Keyword(history.FTxn), Value: value}) // compact EDN and a newline
	}
	if err != nil {
		w.err = fmt.Errorf("elle: op %d: %w", o.Index, err)
	}
}

// Close flushes what was written and returns the first error.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// Write writes h's client transactions to w (see Writer).
func Write(w io.Writer, h history.History) error {
	ew := NewWriter(w)
	for i := range h {
		ew.Add(&h[i])
	}
	return ew.Close()
}

// microOps converts a txn value, [["append","x",1],["r","y",[1,2]]], into
// EDN's [[:append "x" 1] [:r "y" [1 2]]].
func microOps(raw json.RawMessage) ([]any, error) {
	var mops [][]json.RawMessage
	if err := json.Unmarshal(raw, &mops); err != nil {
		return nil, fmt.Errorf("value is not a list of [f, key, value] micro-operations: %.80s", raw)
	}
	out := make([]any, len(mops))
	for i, m := range mops {
		var f, key string
		if len(m) != 3 || json.Unmarshal(m[0], &f) != nil || json.Unmarshal(m[1], &key) != nil {
			return nil, fmt.Errorf("micro-operation %d is not [f, key, value]", i)
		}
		v, err := microValue(m[2])
		if err != nil {
			return nil, fmt.Errorf("micro-operation %d: %w", i, err)
		}
		out[i] = []any{edn.Keyword(f), key, v}
	}
	return out, nil
}

// microValue is a micro-operation's value: an integer, a list of
// integers, or nil.
func microValue(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.Number:
		return x.Int64()
	case []any:
		list := make([]int64, len(x))
		for i, e := range x {
			n, ok := e.(json.Number)
			if !ok {
				return nil, fmt.Errorf("list element %v is not an integer", e)
			}
			var err error
			if list[i], err = n.Int64(); err != nil {
				return nil, err
			}
		}
		return list, nil
	}
	return nil, fmt.Errorf("value %s is neither an integer, a list of integers nor null", raw)
}
