package node

import (
	"sync"
	"time"

	"chaos/node/wal"
)

// lazySyncInterval is how often the lazy-fsync planted bug fsyncs the WAL.
const lazySyncInterval = 2 * time.Second

// lazySync is the lazy-fsync planted bug's timer: the WAL, whose Save no
// longer waits for an fsync (wal.Bugs.LazySync), is fsynced on every tick,
// so what the node acknowledged in between is lost by a power loss.
type lazySync struct {
	stop chan struct{} // nil when no timer runs
	done sync.WaitGroup
}

// start runs the timer on w: opts.lazyTicks, or a ticker of
// opts.lazySyncEvery (none when 0).
func (l *lazySync) start(w *wal.WAL, opts storageOptions) {
	ticks := opts.lazyTicks
	var ticker *time.Ticker
	if ticks == nil {
		if opts.lazySyncEvery <= 0 {
			return
		}
		ticker = time.NewTicker(opts.lazySyncEvery)
		ticks = ticker.C
	}
	l.stop = make(chan struct{})
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		if ticker != nil {
			defer ticker.Stop()
		}
		for {
			select {
			case <-l.stop:
				return
			case <-ticks:
				if err := w.Sync(); err != nil {
					opts.logger.Error("lazy-fsync: WAL fsync failed", "err", err)
				}
			}
		}
	}()
}

// close stops the timer, if one runs, and waits for it.
func (l *lazySync) close() {
	if l.stop == nil {
		return
	}
	close(l.stop)
	l.done.Wait()
	l.stop = nil
}
