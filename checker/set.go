package checker

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"chaos/history"
)

// SetDetails is what Set reports beside its verdict. Element lists are
// sorted.
type SetDetails struct {
	Attempts     int `json:"attempts"`     // add operations invoked
	Acknowledged int `json:"acknowledged"` // adds that returned ok
	// Lost: acknowledged adds, finished before the final read began,
	// missing from it.
	Lost []int64 `json:"lost"`
	// Unexpected: elements in the final read that no add can explain: never
	// added, added only after the read returned, or only by adds that
	// failed (which certainly did not happen).
	Unexpected []int64 `json:"unexpected"`
	// Recovered: adds of unknown outcome (info, or open at the end) whose
	// element is in the final read.
	Recovered []int64 `json:"recovered"`
	// Duplicates: elements the final read holds more than once.
	Duplicates []int64 `json:"duplicates"`
	// InFlight counts acknowledged adds missing from the final read that
	// had not finished when it began: they may land after it, so they are
	// not lost.
	InFlight  int    `json:"in_flight"`
	FinalRead *int64 `json:"final_read,omitempty"` // history index of the final read's invoke
	Reason    string `json:"reason,omitempty"`     // why the verdict is unknown
}

// Set checks a set workload history: `add` ops of unique integers, then a
// final `read` (its ok value the whole set). The last successful read is
// the final read. Valid: nothing lost, nothing unexpected, no duplicates.
// Without a successful read the verdict is unknown. Errors wrap
// ErrMalformed.
func Set(h history.History) (Result, error) {
	adds, read, err := decodeSet(h)
	if err != nil {
		return Result{}, err
	}
	d := &SetDetails{Lost: []int64{}, Unexpected: []int64{}, Recovered: []int64{}, Duplicates: []int64{}}
	for _, a := range adds {
		d.Attempts += a.attempts
		if a.outcome == history.OK {
			d.Acknowledged++
		}
	}
	if read == nil {
		d.Reason = "no successful final read"
		return Result{Valid: Unknown, Details: d}, nil
	}
	d.FinalRead = &read.index
	compareSet(adds, read, d)
	valid := Valid
	if len(d.Lost)+len(d.Unexpected)+len(d.Duplicates) > 0 {
		valid = Invalid
	}
	return Result{Valid: valid, Details: d}, nil
}

// compareSet compares the final read with the adds.
func compareSet(adds map[int64]*setElement, read *setRead, d *SetDetails) {
	present := make(map[int64]bool, len(read.elements))
	for _, e := range read.elements {
		if present[e] {
			d.Duplicates = append(d.Duplicates, e)
			continue
		}
		present[e] = true
		a := adds[e]
		switch {
		case a == nil || a.outcome == history.Fail || a.call > read.ret:
			d.Unexpected = append(d.Unexpected, e)
		case a.outcome == history.Info:
			d.Recovered = append(d.Recovered, e)
		}
	}
	for e, a := range adds {
		if a.outcome != history.OK || present[e] {
			continue
		}
		if a.ret < read.call {
			d.Lost = append(d.Lost, e)
		} else {
			d.InFlight++
		}
	}
	for _, l := range [][]int64{d.Lost, d.Unexpected, d.Recovered, d.Duplicates} {
		slices.Sort(l)
	}
	d.Duplicates = slices.Compact(d.Duplicates)
}

// setElement gathers every add of one element.
type setElement struct {
	attempts int
	outcome  history.Type // best outcome: OK over Info over Fail
	call     int64        // earliest invoke among adds that may have happened
	ret      int64        // earliest acknowledgement
}

type setRead struct {
	index     int64
	call, ret int64
	elements  []int64
}

// decodeSet collects the adds by element and the last successful read.
func decodeSet(h history.History) (map[int64]*setElement, *setRead, error) {
	adds := make(map[int64]*setElement)
	var read *setRead
	key, keyed := "", false
	for _, p := range h.Pairs() {
		inv := &h[p.Invoke]
		if keyed && inv.Key != key {
			return nil, nil, fmt.Errorf("%w: op %d: key %q, but earlier set ops use key %q (one set per history)", ErrMalformed, inv.Index, inv.Key, key)
		}
		key, keyed = inv.Key, true
		outcome := h.Outcome(p)
		switch inv.F {
		case history.FAdd:
			v, err := strconv.ParseInt(string(inv.Value), 10, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: op %d: add value %s, want an integer", ErrMalformed, inv.Index, inv.Value)
			}
			e := adds[v]
			if e == nil {
				e = &setElement{outcome: history.Fail}
				adds[v] = e
			}
			e.record(outcome, inv.Time, h, p)
		case history.FRead:
			if outcome != history.OK {
				continue
			}
			out := &h[p.Complete]
			var elements []int64
			if err := json.Unmarshal(out.Value, &elements); err != nil || elements == nil {
				return nil, nil, fmt.Errorf("%w: op %d: read returned %.40s, want a list of integers", ErrMalformed, out.Index, out.Value)
			}
			read = &setRead{index: inv.Index, call: inv.Time, ret: out.Time, elements: elements}
		default:
			return nil, nil, fmt.Errorf("%w: op %d: f %q is not a set operation (add or read)", ErrMalformed, inv.Index, inv.F)
		}
	}
	return adds, read, nil
}

// record adds one add of the element, ending in outcome.
func (e *setElement) record(outcome history.Type, call int64, h history.History, p history.Pair) {
	e.attempts++
	if outcome == history.Fail {
		return
	}
	if e.outcome == history.Fail || call < e.call {
		e.call = call
	}
	if outcome == history.OK {
		ret := h[p.Complete].Time
		if e.outcome != history.OK || ret < e.ret {
			e.ret = ret
		}
	}
	if outcome == history.OK || e.outcome == history.Fail {
		e.outcome = outcome
	}
}
