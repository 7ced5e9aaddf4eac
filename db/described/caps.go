package described

import "chaos/db"

var _ db.Capable = (*System)(nil)

// Capabilities are what the description says the system can do: its
// leader with a leader probe. It has no fault hooks.
func (s *System) Capabilities() db.Capabilities {
	var c db.Capabilities
	if s.desc.Leader != nil {
		c.Leader = leaderProbe{s}
	}
	return c
}
