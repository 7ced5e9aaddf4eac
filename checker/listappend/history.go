package listappend

// Micro-operation functions: the values of [MicroOp.F].
const (
	FAppend = "append"
	FRead   = "r"
)

// MicroOp is one step of a transaction: an append of a value to the list
// under a key, or a read of that whole list.
//
//   - An append has F == FAppend and uses Key and Value; its List is nil and
//     Known is false.
//   - A read has F == FRead and uses Key; its Value is 0. When Known is true,
//     List is the list it returned, in append order (nil or empty for an
//     empty list). When Known is false the result is not known (the read was
//     only invoked, or its transaction failed or has an unknown outcome) and
//     List is nil.
//
// Anything else is malformed: [Check] reports it as a malformed-op anomaly
// and ignores the micro-operation.
type MicroOp struct {
	F     string
	Key   string
	Value int64
	List  []int64
	Known bool
}

// AppendOp returns the micro-operation appending v to key.
func AppendOp(key string, v int64) MicroOp {
	return MicroOp{F: FAppend, Key: key, Value: v}
}

// ReadOp returns a read of key that returned list (possibly empty).
func ReadOp(key string, list ...int64) MicroOp {
	return MicroOp{F: FRead, Key: key, List: list, Known: true}
}

// UnknownRead returns a read of key whose result is not known.
func UnknownRead(key string) MicroOp {
	return MicroOp{F: FRead, Key: key}
}

// Outcome is how a transaction ended, as its client saw it.
type Outcome uint8

// The outcomes. The zero Outcome is none of them: a transaction carrying it
// is malformed and is treated as Info (it may or may not have committed).
const (
	OK   Outcome = iota + 1 // committed
	Fail                    // certainly did not commit: nothing it did may be seen
	Info                    // indeterminate: it may or may not have committed
)

// String returns the outcome as Jepsen names it.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Info:
		return "info"
	default:
		return "invalid"
	}
}

// Txn is one transaction of the history, its invocation and completion
// already paired by the caller.
//
// Index is its position in the history; it only names the transaction in
// results. Invoke and Complete are times in nanoseconds on one clock.
// Complete is meaningful for OK and Fail transactions; for Info it is
// ignored and taken to be +infinity (the transaction may take effect at any
// time after its invocation). Only the reads of OK transactions are used:
// a failed or indeterminate transaction's reads returned nothing reliable.
type Txn struct {
	Index    int
	Process  int
	Type     Outcome
	Ops      []MicroOp
	Invoke   int64
	Complete int64
}
