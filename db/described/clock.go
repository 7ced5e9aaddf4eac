package described

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"chaos/db"
)

// clockTimeout bounds each node's answer to the clock probe.
const clockTimeout = time.Second

// clockProbe is the Clocks capability of a description with a clock
// probe.
type clockProbe struct{ *System }

// NodeClock implements db.ClockReader: it sends the clock probe to n and
// reads its time, seconds since 1970 at the answer's now.
func (c clockProbe) NodeClock(ctx context.Context, n db.Node) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, clockTimeout)
	defer cancel()
	p := c.desc.Clock
	doc, err := c.askJSON(ctx, p.Request, n, "clock")
	if err != nil {
		return time.Time{}, err
	}
	return clockAt(p.Now, doc)
}

// clockAt reads the time at now in doc: a JSON number of seconds since
// 1970.
func clockAt(now Path, doc any) (time.Time, error) {
	vals := now.Get(doc)
	if len(vals) != 1 {
		return time.Time{}, fmt.Errorf("clock: no %s in the answer", now.Text)
	}
	num, ok := vals[0].(json.Number)
	if !ok {
		return time.Time{}, fmt.Errorf("clock: %s is %s, not a number of seconds since 1970", now.Text, Text(vals[0]))
	}
	s, err := num.Float64()
	if err != nil || s <= 0 || math.IsInf(s, 0) || s > 1<<40 {
		return time.Time{}, fmt.Errorf("clock: %s %s is not a time in seconds since 1970", now.Text, num)
	}
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))), nil
}
