package workload

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"chaos/history"
)

// readSet performs the set workload's final read: a GET of every attempted
// element's key (linearizable unless c.stale), at most c.readers at a time. 200 means
// present and 404 absent; any other answer makes the whole read fail (with
// the first error), as a read that missed an element proves nothing. The
// ok value is the sorted list of present elements.
func (c *ChaosNodeClient) readSet(ctx context.Context, attempted []int64) history.Outcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	present := make([]bool, len(attempted))
	var (
		next    atomic.Int64 // the next element to read
		done    atomic.Int64 // elements read
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	for range min(c.readers, len(attempted)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(attempted) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				found, err := c.readElement(ctx, attempted[i])
				if err != nil {
					errOnce.Do(func() { first = err })
					cancel()
					return
				}
				present[i] = found
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if first == nil && done.Load() < int64(len(attempted)) {
		first = fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if first != nil {
		out := failf("final read of %d elements: %v", len(attempted), first)
		out.Unavailable = nodeRefused(first)
		return out
	}
	elements := make([]int64, 0, len(attempted)) // [] rather than null when empty
	for i, p := range present {
		if p {
			elements = append(elements, attempted[i])
		}
	}
	slices.Sort(elements)
	return history.Outcome{Type: history.OK, Value: elements}
}

// readElement reports whether set element v is present.
func (c *ChaosNodeClient) readElement(ctx context.Context, v int64) (bool, error) {
	key := chaosNodeSetKey(v)
	_, found, err := c.api.Get(ctx, key, c.stale)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", key, transportCause(err))
	}
	return found, nil
}
