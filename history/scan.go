package history

import (
	"bufio"
	"fmt"
	"io"
	"sync"
)

// Scan reads history.jsonl from r as Parse does, but hands each op to fn as
// soon as it is decoded and validated, in order, instead of keeping them:
// a checker that needs only part of each op never holds the whole history.
// op is fn's only during the call: to keep it, copy it (what its fields
// refer to is not reused). An error from fn stops the scan and is returned
// as it is; problems with the input are *ParseErrors, as Parse's, and the
// warnings are Parse's.
//
// Lines are decoded on a goroutine of their own, a batch ahead of the
// validation and of fn, so that a long history is decoded and checked on
// two cores. Scan returns only once that goroutine is done with r.
func Scan(r io.Reader, fn func(op *Op) error) ([]Warning, error) {
	return scan(r, func(op *Op, _ int, _ int64) error { return fn(op) })
}

// scanBatch is a run of consecutive lines decoded, for the validation.
type scanBatch struct {
	first int     // the line number of ops[0]
	ops   []Op    // the decoded ops
	read  []int64 // for each op, the bytes of the input through its line
	torn  *Warning
	err   error // what stopped the decoding after ops (a *ParseError), if anything
}

// batchLines is how many lines a batch holds: enough to make handing over
// cheap, few enough that the validation starts at once.
const batchLines = 1024

// scan is Scan, telling fn also the op's line number and how many bytes
// of the input lie up to its line's end, the newline counted.
func scan(r io.Reader, fn func(op *Op, line int, read int64) error) ([]Warning, error) {
	batches := make(chan *scanBatch, 4)
	free := make(chan *scanBatch, 8)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { decodeLines(r, batches, free, stop) })
	defer wg.Wait()
	defer close(stop)

	var (
		warnings []Warning
		v        Validator
		ops      int
	)
	for b := range batches {
		for i := range b.ops {
			op := &b.ops[i]
			if err := v.Add(op); err != nil {
				return nil, &ParseError{Line: b.first + i, Err: err}
			}
			ops++
			if err := fn(op, b.first+i, b.read[i]); err != nil {
				return nil, err
			}
		}
		if b.torn != nil {
			warnings = append(warnings, *b.torn)
		}
		if b.err != nil {
			return nil, b.err
		}
		select {
		case free <- b:
		default:
		}
	}
	if ops == 0 {
		return warnings, &ParseError{Err: ErrEmpty}
	}
	return warnings, nil
}

// decodeLines reads and decodes r's lines into batches, reusing those that
// come back on free, until the input ends, a line is wrong (the batch's
// err) or stop is closed. It closes batches when it returns.
func decodeLines(r io.Reader, batches chan<- *scanBatch, free <-chan *scanBatch, stop <-chan struct{}) {
	defer close(batches)
	br := bufio.NewReaderSize(r, 1<<20)
	dec := newDecoder()
	var read int64
	b := nextBatch(free, 1)
	send := func() bool {
		select {
		case batches <- b:
			return true
		case <-stop:
			return false
		}
	}
	for line := 1; ; line++ {
		text, complete, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.err = &ParseError{Line: line, Err: err}
			send()
			return
		}
		read += int64(len(text)) + 1
		op, err := dec.decode(text)
		if err != nil && !complete && isSyntaxError(err) {
			b.torn = &Warning{Line: line,
				Msg: fmt.Sprintf("torn final line skipped (%d bytes without a newline: %v)", len(text), err)}
			break
		}
		if err != nil {
			b.err = &ParseError{Line: line, Err: err}
			send()
			return
		}
		b.ops, b.read = append(b.ops, op), append(b.read, read)
		if len(b.ops) == batchLines {
			if !send() {
				return
			}
			b = nextBatch(free, line+1)
		}
	}
	if len(b.ops) > 0 || b.torn != nil {
		send()
	}
}

// nextBatch returns an empty batch starting at line first: one the
// validation is done with, or a new one.
func nextBatch(free <-chan *scanBatch, first int) *scanBatch {
	select {
	case b := <-free:
		*b = scanBatch{first: first, ops: b.ops[:0], read: b.read[:0]}
		return b
	default:
		return &scanBatch{first: first, ops: make([]Op, 0, batchLines), read: make([]int64, 0, batchLines)}
	}
}
