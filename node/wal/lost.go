package wal

import (
	"errors"
	"fmt"
	"os"
)

// lostFile is the file whose presence in a WAL directory says that a
// replay found records the WAL had fsynced gone, and its owner has not
// yet called CaughtUp. It is created (and made durable) before replay
// changes anything, so the loss is remembered across crashes until the
// owner has been caught up, however often it restarts.
const lostFile = "LOST"

// syncedEnd is what a segment's sync block says: where its records ended
// at its last fsync, or why the block could not be read.
type syncedEnd struct {
	end int64
	err error
}

// lostReason says how the segment at path, whose valid records end at
// size, shows that records it had fsynced are gone, or "" if it does not:
// its sync block is damaged, or says the records reached further.
func lostReason(path string, size int64, synced syncedEnd) string {
	switch {
	case synced.err != nil:
		return fmt.Sprintf("%s: %v: where its fsynced records end is unknown", path, synced.err)
	case synced.end > size:
		return fmt.Sprintf("%s: valid records end at byte %d, but %d bytes were fsynced", path, size, synced.end)
	}
	return ""
}

// noteLoss completes info.Lost: a loss this replay found (LostReason set)
// is recorded durably in lostFile; one an earlier replay recorded is
// still in force.
func (w *WAL) noteLoss(info *RecoveryInfo) error {
	if info.LostReason != "" {
		info.Lost = true
		w.log.Warn("wal lost records it had fsynced", "dir", w.dir, "reason", info.LostReason)
		return w.writeLostFile(info.LostReason)
	}
	_, err := os.Stat(w.path(lostFile))
	switch {
	case err == nil:
		info.Lost = true
		info.LostReason = "an earlier recovery found records lost, and the node was not caught up since"
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("check %s: %w", w.path(lostFile), err)
	}
	return nil
}

// writeLostFile creates lostFile holding reason, durably.
func (w *WAL) writeLostFile(reason string) error {
	p := w.path(lostFile)
	if err := os.WriteFile(p, []byte(reason+"\n"), 0o644); err != nil {
		return fmt.Errorf("record the loss: %w", err)
	}
	if w.opts.NoSync {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("record the loss: %w", err)
	}
	defer f.Close()
	if err := w.syncFile(f); err != nil {
		return fmt.Errorf("record the loss: fsync %s: %w", p, err)
	}
	return w.syncNames()
}

// CaughtUp says that the WAL's owner has been brought up to date by its
// peers since the loss RecoveryInfo.Lost reported: the loss is forgotten,
// durably, and later replays no longer report it. It is a no-op when
// there was none.
func (w *WAL) CaughtUp() error {
	err := os.Remove(w.path(lostFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("forget the loss: %w", err)
	}
	if w.opts.NoSync {
		return nil
	}
	return w.syncNames()
}
