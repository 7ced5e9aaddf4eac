package vdsoclock

import (
	"fmt"
	"time"
)

// Before a heal puts the vDSO's own bytes back, a process's monotonic
// clocks may read ahead of the kernel's (a bump, or a fast rate up to its
// lead): put back at once, they would read back by that much, which no
// real clock does. So a heal first drains them: they run slow until what
// they read ahead is given back, and only then is the vDSO restored (its
// clocks then jump forward by what the wait overran, never back).

// DrainRate is how fast a process's clocks run while its monotonic clocks
// give back what they read ahead: half of true time, so that draining
// d takes 2d.
const DrainRate = 0.5

// Drain starts giving back what pid's monotonic clocks read ahead of the
// kernel's: its data page makes every clock run at DrainRate from what it
// reads now (the realtime clocks from true time, which they may step to).
// It returns how long until the monotonic clocks are back on the kernel's
// (0 when they are not ahead, or pid is not patched): Heal after that
// long restores it without a clock reading back.
func Drain(pid int) (time.Duration, error) {
	p, err := Inspect(pid)
	if err != nil || p == nil {
		return 0, err
	}
	now := readings()
	_, mono := p.Page.Shown(now)
	if mono <= 0 {
		return 0, nil
	}
	page := PageFor(Skew{Monotonic: mono, Rate: DrainRate}, now)
	if _, err := writePage(pid, p, page); err != nil {
		return 0, fmt.Errorf("draining the clocks of %d: %w", pid, err)
	}
	return drainTime(mono), nil
}

// drainTime is how long clocks at DrainRate take to give back ahead.
func drainTime(ahead time.Duration) time.Duration {
	return time.Duration(float64(ahead) / (1 - DrainRate))
}
