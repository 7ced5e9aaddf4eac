package foreignlog

import (
	"regexp"
	"strconv"
)

// The messages of the Go teaching Raft github.com/eliben/raft, shared by the
// "eliben" format (its plain log) and the "table" format (the same log
// rendered with one column per node).
var (
	elibenCandidate = regexp.MustCompile(`(?i)^becomes Candidate \(currentTerm=(\d+)`)
	elibenFollower  = regexp.MustCompile(`(?i)^becomes Follower with term=(\d+)`)
	elibenLeader    = regexp.MustCompile(`(?i)^becomes Leader; term=(\d+)`)
	elibenDead      = regexp.MustCompile(`(?i)^becomes Dead`)
	elibenTest      = regexp.MustCompile(`^\[TEST\]\s*(Disconnect|Reconnect|Crash|Restart)\w*\s+(\d+)`)
)

// elibenEvent interprets one message of node. It returns false when the
// message carries no event (most do not: timers, RPCs, replies).
func elibenEvent(node, msg string) (Event, bool) {
	if m := elibenTest.FindStringSubmatch(msg); m != nil {
		kind := map[string]Kind{"Disconnect": KindDisconnect, "Reconnect": KindReconnect, "Crash": KindCrash, "Restart": KindStart}[m[1]]
		return Event{Node: m[2], Kind: kind}, true
	}
	for _, r := range []struct {
		re   *regexp.Regexp
		role Role
	}{{elibenCandidate, Candidate}, {elibenFollower, Follower}, {elibenLeader, Leader}} {
		if m := r.re.FindStringSubmatch(msg); m != nil {
			term, err := strconv.Atoi(m[1])
			if err != nil {
				return Event{}, false
			}
			return Event{Node: node, Kind: KindRole, Role: r.role, Term: term}, true
		}
	}
	if elibenDead.MatchString(msg) {
		return Event{Node: node, Kind: KindStop}, true
	}
	return Event{}, false
}
