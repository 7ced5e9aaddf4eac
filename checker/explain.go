package checker

import (
	"fmt"
	"math"
	"sort"

	"github.com/anishathalye/porcupine"
)

// proof says, for people, why the ops of one key fit no register order.
type proof struct {
	text string
	ops  []*regOp // the ops the text names
}

func (pr proof) failure(key string, proven bool) KeyFailure {
	f := KeyFailure{Key: key, Explanation: "key " + key + ": " + pr.text, Proven: proven}
	for _, op := range pr.ops {
		f.Ops = append(f.Ops, op.index)
	}
	if proven {
		f.Explanation += " (the search ran out of time; this argument alone proves the anomaly)"
	}
	return f
}

// prove looks for one of the common anomalies whose argument is short
// enough to state: a value nobody wrote, a value read before its write
// began, an empty read after an acknowledged write, a stale read (a value
// read after a later write certainly replaced it), and a value coming back
// (read again after another value was read). Each argument is a
// proof that no linearization exists, so prove may also decide a key whose
// search timed out. It returns false when none applies; that proves nothing.
//
// The arguments rely only on facts of the history: successful ops happened
// within their interval, real-time order, and a value with a single possible
// writer can only come from it. The earliest observation that breaks is
// reported.
func prove(ops []*regOp) (proof, bool) {
	ix := newWriteIndex(ops)
	var observers []*regOp
	for _, op := range ops {
		if _, ok := op.observes(); ok {
			observers = append(observers, op)
		}
	}
	sort.SliceStable(observers, func(i, j int) bool { return observers[i].ret < observers[j].ret })
	ix.indexObservers(observers)
	for _, o := range observers {
		if pr, ok := ix.refute(o); ok {
			return pr, true
		}
	}
	return proof{}, false
}

// writeIndex knows, for one key, who may have written what and since when a
// write was certainly in effect.
type writeIndex struct {
	writers   map[int64][]*regOp // value -> ops that may have written it
	firstSeen map[int64]*regOp   // value -> its earliest-returning successful observer
	firstAck  *regOp             // the successful write or cas acknowledged first
	byCall    []*regOp           // every op that may write, by invoke time
	best      []evidence         // best[i]: the earliest certain effect among byCall[i:]

	obsByCall []*regOp    // successful observers, by invoke time
	seen      [][2]*regOp // seen[i]: among obsByCall[i:], the earliest to return, and the earliest to return that observed something else
}

// evidence is the earliest time a write was certainly in effect: when it was
// acknowledged, or when its value was observed if it is the value's only
// possible writer.
type evidence struct {
	at     int64
	writer *regOp
	seenBy *regOp // nil when the evidence is the acknowledgement
}

func newWriteIndex(ops []*regOp) *writeIndex {
	ix := &writeIndex{writers: make(map[int64][]*regOp), firstSeen: make(map[int64]*regOp)}
	firstSeen := ix.firstSeen
	for _, op := range ops {
		if w, ok := op.writes(); ok {
			ix.writers[w] = append(ix.writers[w], op)
			ix.byCall = append(ix.byCall, op)
			if !op.info && (ix.firstAck == nil || op.ret < ix.firstAck.ret) {
				ix.firstAck = op
			}
		}
		if v, ok := op.observes(); ok && v.present {
			if s := firstSeen[v.v]; s == nil || op.ret < s.ret {
				firstSeen[v.v] = op
			}
		}
	}
	sort.SliceStable(ix.byCall, func(i, j int) bool { return ix.byCall[i].call < ix.byCall[j].call })
	ix.best = make([]evidence, len(ix.byCall)+1)
	ix.best[len(ix.byCall)] = evidence{at: math.MaxInt64}
	for i := len(ix.byCall) - 1; i >= 0; i-- {
		s := ix.byCall[i]
		e := evidence{at: math.MaxInt64, writer: s}
		if !s.info {
			e.at = s.ret
		}
		w, _ := s.writes()
		if o := firstSeen[w]; o != nil && len(ix.writers[w]) == 1 && o.ret >= s.call && o.ret < e.at {
			e.at, e.seenBy = o.ret, o
		}
		ix.best[i] = e
		if ix.best[i+1].at < e.at {
			ix.best[i] = ix.best[i+1]
		}
	}
	return ix
}

// refute returns a proof that what o observed cannot have been there.
func (ix *writeIndex) refute(o *regOp) (proof, bool) {
	v, _ := o.observes()
	if !v.present {
		if a := ix.firstAck; a != nil && a.ret < o.call {
			return proof{fmt.Sprintf("%s, but %s had been acknowledged at %s, and a key once written is never empty again",
				o.observed(), a.who(), seconds(a.ret)), []*regOp{o, a}}, true
		}
		return proof{}, false
	}
	ws := ix.writers[v.v]
	if len(ws) == 0 {
		return proof{fmt.Sprintf("%s, but no operation wrote %d to this key", o.observed(), v.v), []*regOp{o}}, true
	}
	first := ws[0]
	for _, w := range ws {
		if w.call < first.call {
			first = w
		}
	}
	if first.call > o.ret {
		return proof{fmt.Sprintf("%s, but %s, the first operation that could write %d, was invoked only at %s",
			o.observed(), first.who(), v.v, seconds(first.call)), []*regOp{o, first}}, true
	}
	if len(ws) != 1 {
		return proof{}, false
	}
	if !ws[0].info {
		if pr, ok := ix.stale(o, ws[0]); ok {
			return pr, true
		}
	}
	return ix.cameBack(o, ws[0])
}

// stale looks for a write that certainly replaced w's value, the only
// source of what o observed, before o began: it began after w was
// acknowledged and was certainly in effect before o was invoked.
func (ix *writeIndex) stale(o, w *regOp) (proof, bool) {
	i := sort.Search(len(ix.byCall), func(i int) bool { return ix.byCall[i].call > w.ret })
	e := ix.best[i]
	if e.at >= o.call {
		return proof{}, false
	}
	old, _ := w.writes()
	u, _ := e.writer.writes()
	text := fmt.Sprintf("%s, but %d was overwritten by %d: %s began at %s, after %s was acknowledged at %s, and ",
		o.observed(), old, u, e.writer.who(), seconds(e.writer.call), w.who(), seconds(w.ret))
	ops := []*regOp{o, w, e.writer}
	if e.seenBy == nil {
		text += "was acknowledged at " + seconds(e.at)
	} else {
		text += e.seenBy.observed()
		ops = append(ops, e.seenBy)
	}
	return proof{text, ops}, true
}

// indexObservers builds seen over the successful observers.
func (ix *writeIndex) indexObservers(observers []*regOp) {
	ix.obsByCall = append([]*regOp(nil), observers...)
	sort.SliceStable(ix.obsByCall, func(i, j int) bool { return ix.obsByCall[i].call < ix.obsByCall[j].call })
	ix.seen = make([][2]*regOp, len(ix.obsByCall)+1)
	for i := len(ix.obsByCall) - 1; i >= 0; i-- {
		candidates := []*regOp{ix.obsByCall[i], ix.seen[i+1][0], ix.seen[i+1][1]}
		sort.SliceStable(candidates, func(a, b int) bool { return earlier(candidates[a], candidates[b]) })
		first := candidates[0]
		ix.seen[i][0] = first
		for _, c := range candidates[1:] {
			if c != nil && observedValue(c) != observedValue(first) {
				ix.seen[i][1] = c
				break
			}
		}
	}
}

// earlier orders ops by return, nil last.
func earlier(a, b *regOp) bool {
	return b == nil || a != nil && a.ret < b.ret
}

func observedValue(op *regOp) regValue {
	v, _ := op.observes()
	return v
}

// cameBack looks for an observation of another value between the moment
// w, the only source of what o observed, certainly took effect and o's
// invoke: once replaced, a value with a single writer cannot come back.
func (ix *writeIndex) cameBack(o, w *regOp) (proof, bool) {
	u, _ := w.writes()
	effect, because := int64(math.MaxInt64), ""
	if !w.info {
		effect, because = w.ret, "when it was acknowledged"
	}
	if s := ix.firstSeen[u]; s != nil && s.ret < effect {
		effect, because = s.ret, "when "+s.observed()
	}
	i := sort.Search(len(ix.obsByCall), func(i int) bool { return ix.obsByCall[i].call > effect })
	between := ix.seen[i][0]
	if between != nil && observedValue(between) == (regValue{v: u, present: true}) {
		between = ix.seen[i][1]
	}
	if between == nil || between.ret >= o.call {
		return proof{}, false
	}
	return proof{fmt.Sprintf("%s, but %d had already been replaced: its only writer, %s, took effect by %s (%s), and after that, before this began, %s",
		o.observed(), u, w.who(), seconds(effect), because, between.observed()), []*regOp{o, w, between}}, true
}

// explainPartial explains a failure from the longest partial linearization
// the search found, for anomalies prove has no argument for.
func explainPartial(ops []*regOp, info porcupine.LinearizationInfo) proof {
	generic := proof{text: fmt.Sprintf("no order of its %d operations fits a single register", len(ops))}
	partials := info.PartialLinearizations()
	if len(partials) != 1 {
		return generic
	}
	var longest []int
	for _, seq := range partials[0] {
		if len(seq) > len(longest) {
			longest = seq
		}
	}
	placed := make([]bool, len(ops))
	state := regValue{}
	for _, id := range longest {
		placed[id] = true
		_, state = step(state, ops[id])
	}
	var stuck *regOp
	for id, op := range ops {
		if !placed[id] && (stuck == nil || op.deadline < stuck.deadline) {
			stuck = op
		}
	}
	if stuck == nil {
		return generic
	}
	text := generic.text + fmt.Sprintf(": the longest legal order the search found places %d of them, leaving the value %s, and gets stuck before %s (invoked at %s)",
		len(longest), state, stuck.who(), seconds(stuck.call))
	if !stuck.unbounded() {
		text += ", which had to take effect by " + seconds(stuck.deadline)
	}
	involved := []*regOp{stuck}
	if len(longest) > 0 {
		involved = append(involved, ops[longest[len(longest)-1]])
	}
	return proof{text, involved}
}

// who names an op for an explanation: "process 3's write 7".
func (op *regOp) who() string {
	return fmt.Sprintf("process %v's %s", op.process, op)
}

// observed says what a successful op observed and when.
func (op *regOp) observed() string {
	span := fmt.Sprintf("%.3f–%.3f s", float64(op.call)/1e9, float64(op.ret)/1e9)
	if op.kind == regCas {
		return fmt.Sprintf("process %v's cas %d→%d succeeded at %s", op.process, op.arg, op.arg2, span)
	}
	if !op.read.present {
		return fmt.Sprintf("process %v read nothing at %s", op.process, span)
	}
	return fmt.Sprintf("process %v read %d at %s", op.process, op.read.v, span)
}

// seconds formats a history time (ns since the start) for people.
func seconds(ns int64) string {
	return fmt.Sprintf("%.3f s", float64(ns)/1e9)
}
