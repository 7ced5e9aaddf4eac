package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"chaos/history"
)

// FinalSetRead performs the set workload's final read through each of
// clients, one per node, concurrently, and records each as a read on a
// process of its own, numbered after the highest process in rec's history.
// attempted is every element the adds may have put in the set (see
// Set.Attempted).
//
// Call it after the load ended (Runner.Run returned) and the cluster
// healed, with ctx bounding how long the reads may take. Each read's
// outcome is recorded as its client answered; the error is about
// recording only.
func FinalSetRead(ctx context.Context, clients []Client, attempted []int64, rec *history.Recorder) error {
	if len(clients) == 0 {
		return errors.New("final set read: no clients")
	}
	first := rec.NextProcess()
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			if err := finalRead(ctx, c, first+i, attempted, rec); err != nil {
				errs[i] = fmt.Errorf("final set read %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// finalRead performs and records one final read as process.
func finalRead(ctx context.Context, c Client, process int, attempted []int64, rec *history.Recorder) error {
	p, err := rec.Invoke(process, history.FRead, "", nil)
	if err != nil {
		return fmt.Errorf("record invoke: %w", err)
	}
	out := recordable(c.Do(ctx, Op{F: history.FRead, Attempted: attempted}))
	if err := rec.Complete(p, out); err != nil {
		return fmt.Errorf("record %v: %w", out.Type, err)
	}
	return nil
}
