package testrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The load ends at the time limit when the final heal left Recovery
// before it, and else Recovery after the heal, within maxLoadOverrun.
func TestLoadEndLeavesARecoveryWindow(t *testing.T) {
	const s = time.Second
	cases := []struct {
		name                        string
		limit, recovery, heal, want time.Duration
		healed                      bool
	}{
		{"no schedule ran", 60 * s, 5 * s, 0, 60 * s, false},
		{"healed at the deadline", 60 * s, 5 * s, 55 * s, 60 * s, true},
		{"healed early (interrupted)", 60 * s, 5 * s, 20 * s, 60 * s, true},
		{"the heal took 2 s", 60 * s, 5 * s, 57 * s, 62 * s, true},
		// Issue 12: a restart held the heal until 89.3 s of a 60 s run.
		{"healed past the time limit", 60 * s, 5 * s, 89300 * time.Millisecond, 94300 * time.Millisecond, true},
		{"a heal later than the bound", 60 * s, 5 * s, 200 * s, 60*s + maxLoadOverrun, true},
	}
	for _, c := range cases {
		got := loadEnd(c.limit, c.recovery, c.heal, c.healed)
		assert.Equal(t, c.want, got, c.name)
		if c.healed && c.heal+c.recovery <= c.limit+maxLoadOverrun {
			assert.GreaterOrEqual(t, got-c.heal, c.recovery, "%s: a recovery window follows the heal", c.name)
		}
	}
}

// The schedule's deadline leaves Recovery of the time limit for the
// window when the time limit holds both, and the load end makes up for a
// short one.
func TestNemesisDeadlineAndLoadEnd(t *testing.T) {
	r := &run{o: Options{TimeLimit: 30 * time.Second, Recovery: 5 * time.Second}}
	assert.Equal(t, 25*time.Second, r.nemesisTime())
	r.o.TimeLimit = 8 * time.Second
	assert.Equal(t, 8*time.Second, r.nemesisTime(), "too short for both: faults all along")
	assert.Equal(t, 13*time.Second, loadEnd(r.o.TimeLimit, r.o.Recovery, r.nemesisTime(), true),
		"... and the load goes on for Recovery after the heal")
}
