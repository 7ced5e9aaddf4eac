package described

import "chaos/db"

// Get is the timing t states, with db.DefaultTiming's heartbeat and
// election timeout where it states none, and no recovery bound where it
// states none. A nil t states nothing.
func (t *Timing) Get() db.Timing {
	var out db.Timing
	if t != nil {
		out = db.Timing{Heartbeat: t.Heartbeat.D, ElectionTimeout: t.ElectionTimeout.D, Recovery: t.Recovery.D}
	}
	return out.WithDefaults()
}
