package described

import "chaos/db"

var _ db.Capable = (*System)(nil)

// Capabilities are what the description says the system can do: its
// leader with a leader probe (or, without one, from its state probe), its
// nodes' states with a state probe, their event logs with events, and its
// timing, its data_dir, its fake clocks, its process, its peer address
// (which it says with ports.peer), and its nodes' clocks with a clock
// probe. It has no fault hooks and no membership changes.
func (s *System) Capabilities() db.Capabilities {
	c := db.Capabilities{Timing: s.desc.Timing.Get(), Storage: s, FakeClocks: s, Processes: s, Peers: s}
	if s.desc.State != nil {
		c.States = stateProbe{s}
		c.Leader = statesLeader{stateProbe{s}}
	}
	if s.desc.Leader != nil {
		c.Leader = leaderProbe{s}
	}
	if s.desc.Events.IsSet() {
		c.Events = eventLogs{s}
	}
	if s.desc.Clock != nil {
		c.Clocks = clockProbe{s}
	}
	return c
}

// eventLogs is the Events capability of a description with events.
type eventLogs struct{ *System }

// EventLog is events expanded for n.
func (e eventLogs) EventLog(n db.Node) string { return e.desc.Events.Expand(e.Vars(n)) }
