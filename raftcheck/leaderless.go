package raftcheck

import (
	"slices"
	"time"
)

// Leaderless returns the stretches of wall time during which at least one
// node was running and no node was leader, in order.
//
// Events are taken in time order (a stable sort of a copy). A node runs
// from its start to its stop; a killed node emits no stop, so it counts as
// running until its next start; a node whose first event is not start
// runs from its first event. A node is leader from its role event with
// role "leader" until its next role event, its stop, its next start, or
// another node's becoming leader in a higher term. A paused or partitioned
// leader still counts as leader: only the events are used. A window still
// open at the last event ends there, marked open. Times are the nodes' own
// clocks, so clock faults skew these windows.
func Leaderless(events []Event) []LeaderlessWindow {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return a.Time.Compare(b.Time) })
	var (
		ws      = []LeaderlessWindow{}
		running = map[string]bool{}
		leaders = map[string]uint64{} // node -> term it leads
		open    bool
		since   time.Time
	)
	for _, e := range evs {
		if e.Event != "stop" {
			running[e.Node] = true // any event shows the node running
		}
		switch e.Event {
		case "start":
			delete(leaders, e.Node)
		case "stop":
			delete(running, e.Node)
			delete(leaders, e.Node)
		case "role":
			delete(leaders, e.Node)
			if e.Role == "leader" {
				for n, t := range leaders {
					if t < e.Term {
						delete(leaders, n)
					}
				}
				leaders[e.Node] = e.Term
			}
		}
		leaderless := len(running) > 0 && len(leaders) == 0
		switch {
		case leaderless && !open:
			open, since = true, e.Time
		case !leaderless && open:
			open = false
			ws = append(ws, LeaderlessWindow{Start: since, End: e.Time, Duration: e.Time.Sub(since)})
		}
	}
	if open {
		end := evs[len(evs)-1].Time
		ws = append(ws, LeaderlessWindow{Start: since, End: end, Duration: end.Sub(since), Open: true})
	}
	return ws
}
