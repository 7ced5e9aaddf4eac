package described

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"chaos/db"
)

// leaderTimeout bounds each node's answer to the leader probe.
const leaderTimeout = 500 * time.Millisecond

// leaderAnswer is one node's answer: its own id and its leader's.
type leaderAnswer struct {
	self, leader string
	ok           bool
}

// leaderProbe is the Leader capability of a description with a leader
// probe.
type leaderProbe struct{ *System }

// Leader implements db.LeaderFinder: it asks every node of nodes at once
// and returns the node whose own id the most answers name as leader. Ids
// learned in earlier calls still count, so a leader that does not answer
// now (paused, cut off) is still named.
func (l leaderProbe) Leader(ctx context.Context, nodes []db.Node) (string, error) {
	answers := make([]leaderAnswer, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { answers[i] = l.askLeader(ctx, n) })
	}
	wg.Wait()
	votes := map[string]int{}
	for i, a := range answers {
		if !a.ok {
			continue
		}
		l.ids.put(a.self, nodes[i].Name)
		votes[a.leader]++
	}
	var best string
	bestVotes := 0
	ids := make([]string, 0, len(votes))
	for id := range votes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		name, known := l.ids.get(id)
		if known && votes[id] > bestVotes {
			best, bestVotes = name, votes[id]
		}
	}
	if best == "" {
		return "", errors.New("no node names a leader")
	}
	return best, nil
}

// askLeader sends the leader probe to n and reads the two ids.
func (l leaderProbe) askLeader(ctx context.Context, n db.Node) leaderAnswer {
	ctx, cancel := context.WithTimeout(ctx, leaderTimeout)
	defer cancel()
	p := l.desc.Leader
	doc, err := l.askJSON(ctx, p.Request, n, "leader")
	if err != nil {
		return leaderAnswer{}
	}
	self, leader := p.Self.Get(doc), p.Leader.Get(doc)
	if len(self) != 1 || len(leader) != 1 {
		return leaderAnswer{}
	}
	return leaderAnswer{self: Text(self[0]), leader: Text(leader[0]), ok: true}
}
