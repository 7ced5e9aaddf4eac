package eventlog

import (
	"strconv"
	"time"

	"chaos/internal/jsonline"
)

// appendLine appends e as a line of events.jsonl written by node: time,
// event and node, then the fields of e's kind in the order the Kind
// constants list them (zero values included), and a newline. An event of
// a kind this package does not name gets its non-zero fields.
func (e Event) appendLine(b []byte, node string) []byte {
	b = append(b, `{"time":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","event":`...)
	b = jsonline.AppendString(b, string(e.Event))
	b = appendStr(b, "node", node)
	switch e.Event {
	case KindStart:
		b = appendUint(b, "term", e.Term)
		b = appendStr(b, "for", e.For)
		b = appendUint(b, "index", e.Index)
		b = appendInt(b, "entries", e.Entries)
		b = appendInt(b, "truncated", int(e.Truncated))
		if e.Lost != "" {
			b = appendStr(b, "lost", e.Lost)
		}
		b = appendStr(b, "bugs", e.Bugs)
	case KindStop:
	case KindRole:
		b = appendStr(b, "role", string(e.Role))
		b = appendUint(b, "term", e.Term)
		b = appendStr(b, "leader", e.Leader)
	case KindVote:
		b = appendUint(b, "term", e.Term)
		b = appendStr(b, "for", e.For)
	case KindCommit:
		b = appendUint(b, "index", e.Index)
	case KindApply:
		b = appendUint(b, "index", e.Index)
		b = appendUint(b, "term", e.Term)
		b = appendStr(b, "hash", e.Hash)
	case KindSnapshot, KindRestore:
		b = appendUint(b, "index", e.Index)
		b = appendUint(b, "term", e.Term)
	case KindConf:
		b = appendUint(b, "index", e.Index)
		b = appendUint(b, "term", e.Term)
		b = appendStr(b, "change", e.Change)
		b = appendStr(b, "voters", e.Voters)
		b = appendStr(b, "learners", e.Learners)
	default:
		b = e.appendNonZero(b)
	}
	return append(b, "}\n"...)
}

// appendNonZero appends the fields of an event of an unnamed kind that are
// not zero.
func (e Event) appendNonZero(b []byte) []byte {
	if e.Role != "" {
		b = appendStr(b, "role", string(e.Role))
	}
	if e.Leader != "" {
		b = appendStr(b, "leader", e.Leader)
	}
	if e.Term != 0 {
		b = appendUint(b, "term", e.Term)
	}
	if e.For != "" {
		b = appendStr(b, "for", e.For)
	}
	if e.Index != 0 {
		b = appendUint(b, "index", e.Index)
	}
	if e.Hash != "" {
		b = appendStr(b, "hash", e.Hash)
	}
	if e.Entries != 0 {
		b = appendInt(b, "entries", e.Entries)
	}
	if e.Truncated != 0 {
		b = appendInt(b, "truncated", int(e.Truncated))
	}
	if e.Lost != "" {
		b = appendStr(b, "lost", e.Lost)
	}
	if e.Bugs != "" {
		b = appendStr(b, "bugs", e.Bugs)
	}
	return b
}

// appendKey appends ,"key": (keys are plain ASCII).
func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendStr(b []byte, key, v string) []byte {
	return jsonline.AppendString(appendKey(b, key), v)
}

func appendUint(b []byte, key string, v uint64) []byte {
	return strconv.AppendUint(appendKey(b, key), v, 10)
}

func appendInt(b []byte, key string, v int) []byte {
	return strconv.AppendInt(appendKey(b, key), int64(v), 10)
}
