package raftcheck

import (
	"chaos/eventlog"
	"chaos/foreignlog"
)

// Leaderless returns the stretches of wall time during which no node led
// the newest term, in order. They are foreignlog's leaderless windows
// ([foreignlog.Window] says when one begins and ends: from the first
// event, through times when every node is down, until a node leads the
// newest term; a window still open at the last event is marked open),
// put back on the nodes' clocks. A paused or partitioned leader still
// counts as leader until a higher term appears: only the events are used.
// Times are the nodes' own clocks, so clock faults skew these windows.
func Leaderless(events []eventlog.Event) []LeaderlessWindow {
	return leaderlessWindows(analyze(events))
}

// leaderlessWindows returns the leaderless windows of an analysis.
func leaderlessWindows(f foreignlog.Facts) []LeaderlessWindow {
	ws := []LeaderlessWindow{}
	for _, w := range f.Leaderless {
		ws = append(ws, LeaderlessWindow{Start: f.Start.Add(w.Start), End: f.Start.Add(w.End),
			Duration: w.End - w.Start, Open: w.Open})
	}
	return ws
}

// analyze runs foreignlog's analysis (leaders per term, leaderless
// windows) over events, in time order. Events it does not know (another
// event name or role) are left out of it, and so are conf events: the
// membership is membership.go's to follow, and leaves these facts alone.
func analyze(events []eventlog.Event) foreignlog.Facts {
	evs := make([]foreignlog.Event, 0, len(events))
	for _, e := range events {
		if e.Event == eventlog.KindConf {
			continue
		}
		if ev, ok := foreignlog.FromEventLog(e); ok {
			evs = append(evs, ev)
		}
	}
	return foreignlog.Analyze(evs)
}
