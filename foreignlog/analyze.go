package foreignlog

import (
	"sort"
	"strconv"
	"time"
)

// Tenure is one node's time as leader of one term. Start and End are
// offsets from Facts.Start.
type Tenure struct {
	Term  int           `json:"term"`
	Node  string        `json:"node"`
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Open means the log ended while the node still led.
	Open bool `json:"open,omitempty"`
	// EndedBy says what ended it: a role change, crash, stop, or the end
	// of the log.
	EndedBy string `json:"ended_by"`
	Line    int    `json:"line"`
}

// Window is a stretch of time in which no node led the newest term (the
// highest term any role or vote event has shown so far). It begins at the
// first event, or at the event after which no node leads the newest term,
// and ends at the event that makes a node leader of it. A node leads from
// its role event with role leader until its next role event in another
// role or term, its stop or crash, or its restart (a start without a stop
// before it); a paused or partitioned leader still leads until a higher
// term appears, since only the events are used. Every node being down
// does not end a window: the cluster has no leader then either. A window
// still open when the log ends is Open and ends at the last event, even
// at zero length, unless it began during the trailing run of stops and
// crashes that left every node down (the end of a test): that is no
// window.
type Window struct {
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// FromTerm and ToTerm are the newest terms at its start and end.
	FromTerm int  `json:"from_term"`
	ToTerm   int  `json:"to_term"`
	Open     bool `json:"open,omitempty"` // still leaderless when the log ends
}

// Fault is a crash, stop, restart or network change of one node.
type Fault struct {
	At   time.Duration `json:"at_ns"`
	Node string        `json:"node"`
	// Kind is crash, stop, restart, disconnect or reconnect; "crash" with
	// Inferred set is a restart without a logged stop or crash.
	Kind     string `json:"kind"`
	Inferred bool   `json:"inferred,omitempty"`
	Line     int    `json:"line"`
}

// Churn describes how fast terms went by.
type Churn struct {
	FirstTerm      int     `json:"first_term"`
	LastTerm       int     `json:"last_term"`
	TermsPerSecond float64 `json:"terms_per_second"`
	// LeaderlessTerms are the terms (above 0, from FirstTerm to LastTerm)
	// in which no node became leader.
	LeaderlessTerms []int `json:"leaderless_terms"`
	// LongestLeaderlessRun is the longest run of consecutive leaderless
	// terms, [first, last]; empty when every term had a leader.
	LongestLeaderlessRun []int `json:"longest_leaderless_run,omitempty"`
}

// Facts is what Analyze finds in a log.
type Facts struct {
	// Start is the time of the first event; offsets are from it.
	Start time.Time     `json:"start"`
	Span  time.Duration `json:"span_ns"`
	Nodes []string      `json:"nodes"`
	// Leaders are the tenures, in the order they began; a node's first
	// tenure in a term begins at its first role event saying it leads it.
	Leaders []Tenure `json:"leaders"`
	// TwoLeaderTerms are the terms more than one node led, ascending.
	TwoLeaderTerms []int    `json:"two_leader_terms"`
	Leaderless     []Window `json:"leaderless"`
	Churn          Churn    `json:"churn"`
	Faults         []Fault  `json:"faults"`
	Notes          []Event  `json:"notes,omitempty"`
	// Membership is the cluster's configurations in the order nodes first
	// switched to them (see memberships); none for a log without conf
	// events, whose membership is the nodes seen.
	Membership []Membership `json:"membership,omitempty"`
}

// Sort orders events by time, keeping the log's order among equal times.
func Sort(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
}

// Analyze derives the facts of a log from its events, which it sorts.
func Analyze(evs []Event) Facts {
	Sort(evs)
	var f Facts
	started := false
	a := analysis{facts: &f, leading: map[string]int{}, up: map[string]bool{}, seen: map[string]bool{}, led: map[int][]string{},
		members: newMemberships()}
	for _, ev := range evs {
		if ev.Kind == KindNote {
			f.Notes = append(f.Notes, ev)
			continue
		}
		if !started {
			f.Start, started = ev.Time, true
		}
		a.step(ev)
	}
	a.finish()
	return f
}

// analysis is the state of one Analyze pass.
type analysis struct {
	facts   *Facts
	at      time.Duration
	maxTerm int
	minTerm int
	termAt  [2]time.Duration // first and last time a term was seen
	anyTerm bool
	leading map[string]int // node → index in facts.Leaders of its open tenure
	up      map[string]bool
	seen    map[string]bool
	led     map[int][]string // term → nodes that led it
	members *memberships
	window  *Window
	// shutdownAt is when the trailing run of stops and crashes began;
	// inShutdown says whether the events since then were all stops/crashes.
	shutdownAt time.Duration
	inShutdown bool
}

// node notes that a node exists.
func (a *analysis) node(n string) {
	if n != "" && !a.seen[n] {
		a.seen[n] = true
		a.facts.Nodes = append(a.facts.Nodes, n)
	}
}

// hasLeader reports whether some node leads the newest term.
func (a *analysis) hasLeader() bool {
	for _, i := range a.leading {
		if a.facts.Leaders[i].Term == a.maxTerm {
			return true
		}
	}
	return false
}

// endTenure closes node's open tenure, if any.
func (a *analysis) endTenure(node, by string) {
	if i, ok := a.leading[node]; ok {
		a.facts.Leaders[i].End, a.facts.Leaders[i].EndedBy = a.at, by
		delete(a.leading, node)
	}
}

// fault records a fault.
func (a *analysis) fault(ev Event, kind string, inferred bool) {
	a.facts.Faults = append(a.facts.Faults, Fault{At: a.at, Node: ev.Node, Kind: kind, Inferred: inferred, Line: ev.Line})
}

// step applies one event. A conf event changes only the membership: it
// neither opens nor closes a leaderless window, nor says a node is up.
func (a *analysis) step(ev Event) {
	f := a.facts
	a.at = ev.Time.Sub(f.Start)
	a.node(ev.Node)
	a.node(ev.For)
	if ev.Kind == KindConf {
		a.members.step(ev, a.at)
		return
	}
	if ev.Kind == KindRole || ev.Kind == KindVote {
		if !a.anyTerm || ev.Term < a.minTerm {
			a.minTerm = ev.Term
		}
		if !a.anyTerm {
			a.termAt[0] = a.at
		}
		a.anyTerm = true
		a.termAt[1] = a.at
		if ev.Term > a.maxTerm {
			a.maxTerm = ev.Term
		}
	}
	if ev.Kind == KindStop || ev.Kind == KindCrash {
		if !a.inShutdown {
			a.shutdownAt, a.inShutdown = a.at, true
		}
	} else {
		a.inShutdown = false
	}
	switch ev.Kind {
	case KindRole:
		if i, ok := a.leading[ev.Node]; ok && (ev.Role != Leader || f.Leaders[i].Term != ev.Term) {
			a.endTenure(ev.Node, "became "+string(ev.Role))
		}
		if _, ok := a.leading[ev.Node]; ev.Role == Leader && !ok {
			a.leading[ev.Node] = len(f.Leaders)
			f.Leaders = append(f.Leaders, Tenure{Term: ev.Term, Node: ev.Node, Start: a.at, Line: ev.Line})
			a.led[ev.Term] = appendNew(a.led[ev.Term], ev.Node)
		}
		a.up[ev.Node] = true
	case KindStart:
		if a.up[ev.Node] {
			a.endTenure(ev.Node, "crash")
			a.fault(ev, "crash", true)
		}
		if a.up[ev.Node] || a.seenDown(ev.Node) {
			a.fault(ev, "restart", false)
		}
		a.up[ev.Node] = true
	case KindStop, KindCrash:
		a.endTenure(ev.Node, string(ev.Kind))
		a.fault(ev, string(ev.Kind), false)
		a.up[ev.Node] = false
	case KindDisconnect, KindReconnect:
		a.fault(ev, string(ev.Kind), false)
	default:
		if ev.Node != "" {
			if _, known := a.up[ev.Node]; !known {
				a.up[ev.Node] = true
			}
		}
	}
	a.track()
}

// allDown reports whether the log ended with every node stopped or crashed
// (the end of a test), after which no leader is expected.
func (a *analysis) allDown() bool {
	if !a.inShutdown {
		return false
	}
	for _, up := range a.up {
		if up {
			return false
		}
	}
	return true
}

// seenDown reports whether node is known and down.
func (a *analysis) seenDown(node string) bool {
	up, known := a.up[node]
	return known && !up
}

// track opens and closes leaderless windows after each event (see Window).
func (a *analysis) track() {
	has := a.hasLeader()
	switch {
	case !has && a.window == nil:
		a.window = &Window{Start: a.at, FromTerm: a.maxTerm}
	case has && a.window != nil:
		a.window.End, a.window.ToTerm = a.at, a.maxTerm
		a.facts.Leaderless = append(a.facts.Leaderless, *a.window)
		a.window = nil
	}
}

// finish closes what is open at the end of the log and computes churn.
func (a *analysis) finish() {
	f := a.facts
	f.Span = a.at
	f.Membership = a.members.list
	for node := range a.leading {
		i := a.leading[node]
		f.Leaders[i].End, f.Leaders[i].Open, f.Leaders[i].EndedBy = a.at, true, "end of log"
	}
	if a.window != nil && !(a.allDown() && a.window.Start >= a.shutdownAt) {
		a.window.End, a.window.ToTerm, a.window.Open = a.at, a.maxTerm, true
		f.Leaderless = append(f.Leaderless, *a.window)
	}
	for t, nodes := range a.led {
		if len(nodes) > 1 {
			f.TwoLeaderTerms = append(f.TwoLeaderTerms, t)
		}
	}
	sort.Ints(f.TwoLeaderTerms)
	sortNodes(f.Nodes)
	if !a.anyTerm {
		return
	}
	c := Churn{FirstTerm: a.minTerm, LastTerm: a.maxTerm}
	if d := a.termAt[1] - a.termAt[0]; d > 0 {
		c.TermsPerSecond = float64(a.maxTerm-a.minTerm) / d.Seconds()
	}
	var run []int
	for t := max(a.minTerm, 1); t <= a.maxTerm; t++ {
		if len(a.led[t]) > 0 {
			run = nil
			continue
		}
		c.LeaderlessTerms = append(c.LeaderlessTerms, t)
		if run == nil {
			run = []int{t, t}
		} else {
			run[1] = t
		}
		if c.LongestLeaderlessRun == nil || run[1]-run[0] > c.LongestLeaderlessRun[1]-c.LongestLeaderlessRun[0] {
			c.LongestLeaderlessRun = []int{run[0], run[1]}
		}
	}
	f.Churn = c
}

// appendNew appends s to list unless it is there.
func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// sortNodes orders node names numerically when they are numbers, else
// alphabetically.
func sortNodes(nodes []string) {
	sort.SliceStable(nodes, func(i, j int) bool {
		a, errA := strconv.Atoi(nodes[i])
		b, errB := strconv.Atoi(nodes[j])
		if errA == nil && errB == nil {
			return a < b
		}
		if (errA == nil) != (errB == nil) {
			return errA == nil
		}
		return nodes[i] < nodes[j]
	})
}
