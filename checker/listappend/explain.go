package listappend

import (
	"fmt"
	"strings"
)

// Explain returns the anomaly in English. For a cycle it is one sentence
// per step, saying why its first transaction must precede its second, and
// a last one closing the cycle; otherwise it is Detail.
func (a Anomaly) Explain() string {
	if len(a.Steps) == 0 {
		return a.Detail
	}
	var b strings.Builder
	order := make([]string, 0, len(a.Steps)+1)
	for _, s := range a.Steps {
		b.WriteString(s.Sentence())
		b.WriteByte('\n')
		order = append(order, fmt.Sprintf("T%d", s.From))
	}
	order = append(order, order[0])
	fmt.Fprintf(&b, "So %s: a cycle, which is %s (%s).", strings.Join(order, " < "), a.Name, describe(a.Name))
	return b.String()
}

// Sentence says, in one English sentence, why s.From must precede s.To.
func (s Step) Sentence() string {
	so := fmt.Sprintf("(%s), so T%d < T%d.", s.Kind, s.From, s.To)
	switch s.Kind {
	case WW:
		return fmt.Sprintf("T%d appended %d to %s right after T%d's append of %d %s",
			s.To, s.ToValue, s.Key, s.From, s.FromValue, so)
	case WR:
		return fmt.Sprintf("T%d read %s %s, which T%d appended %s",
			s.To, s.Key, ending(s.ReadLen, s.FromValue), s.From, so)
	case RW:
		if s.ReadLen == 0 {
			return fmt.Sprintf("T%d read %s as empty, before T%d's append of %d, the first version of %s %s",
				s.From, s.Key, s.To, s.ToValue, s.Key, so)
		}
		return fmt.Sprintf("T%d read %s %s, before T%d's append of %d, the next version of %s %s",
			s.From, s.Key, ending(s.ReadLen, s.FromValue), s.To, s.ToValue, s.Key, so)
	case Realtime:
		return fmt.Sprintf("T%d completed at %d ns, before T%d was invoked at %d ns %s",
			s.From, s.Completed, s.To, s.Invoked, so)
	default:
		return fmt.Sprintf("T%d ran right before T%d on process %d %s", s.From, s.To, s.Proc, so)
	}
}

// ending describes a read list by its length and last value.
func ending(n int, last int64) string {
	if n == 1 {
		return fmt.Sprintf("= [%d]", last)
	}
	return fmt.Sprintf("= [... %d] (%d values)", last, n)
}

// describe says what a cycle class is made of.
func describe(name string) string {
	base, extra := name, ""
	if b, ok := strings.CutSuffix(name, RealtimeSuffix); ok {
		base, extra = b, ", and needs realtime order"
	} else if b, ok := strings.CutSuffix(name, ProcessSuffix); ok {
		base, extra = b, ", and needs process order"
	}
	var what string
	switch base {
	case G0:
		what = "write dependencies only: a write cycle"
	case G1c:
		what = "write and read dependencies: circular information flow"
	case GSingle:
		what = "exactly one anti-dependency: read skew"
	case GNonadjacent:
		what = "several anti-dependencies, no two in a row"
	default:
		what = "anti-dependencies, two in a row: write skew"
	}
	return what + extra
}
