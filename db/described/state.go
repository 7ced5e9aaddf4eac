package described

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
)

// stateTimeout bounds each node's answer to the state probe, whatever ctx
// allows: a paused node never answers.
const stateTimeout = time.Second

// maxStateBytes bounds what a state command prints.
const maxStateBytes = 64 << 10

// stateProbe is the States capability of a description with a state
// probe.
type stateProbe struct{ *System }

// stateAnswer is one node's answer to the state probe, ids as the system
// gives them.
type stateAnswer struct {
	self, role, leader, vote         string
	term, commit, applied, lastIndex uint64
}

// States implements db.StateReporter: it asks every node of nodes at once
// and returns the states of those whose answer had a term. Leader and
// vote ids become node names through the ids the nodes answered as their
// own (self; those learned in earlier calls, and by the leader probe,
// count), or are node names already; an id neither names is left out. A
// node that says no role has the one its leader shows: it leads when it
// names itself, it follows when it names another.
func (p stateProbe) States(ctx context.Context, nodes []db.Node) (map[string]db.NodeState, error) {
	answers := make([]*stateAnswer, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			if a, err := p.askState(ctx, n); err == nil {
				answers[i] = a
			}
		})
	}
	wg.Wait()
	for i, a := range answers {
		if a != nil && a.self != "" {
			p.ids.put(a.self, nodes[i].Name)
		}
	}
	out := map[string]db.NodeState{}
	for i, a := range answers {
		if a == nil {
			continue
		}
		s := db.NodeState{Role: normalRole(a.role), Term: a.term, Leader: p.nodeName(a.leader, nodes),
			Vote: p.nodeName(a.vote, nodes), Commit: a.commit, Applied: a.applied, LastIndex: a.lastIndex}
		if s.Role == "" && s.Leader != "" {
			// No role: the node that names itself leads, one that names
			// another follows it.
			s.Role = db.RoleFollower
			if s.Leader == nodes[i].Name {
				s.Role = db.RoleLeader
			}
		}
		out[nodes[i].Name] = s
	}
	return out, ctx.Err()
}

// nodeName is the node id names: one whose own id it is, or the node
// called id; "" for none (no id, 0, null, or one no node answered as).
func (p stateProbe) nodeName(id string, nodes []db.Node) string {
	if id == "" || id == "0" || id == "null" {
		return ""
	}
	if name, ok := p.ids.get(id); ok {
		return name
	}
	for _, n := range nodes {
		if n.Name == id {
			return id
		}
	}
	return ""
}

// normalRole is a system's name of a role as db.NodeState has it: any
// spelling of leader, follower, candidate or pre-candidate (LEADER,
// StateLeader, PreCandidate), else the name in lower case.
func normalRole(role string) string {
	r := strings.ToLower(role)
	switch {
	case strings.Contains(r, "pre") && strings.Contains(r, "candidate"):
		return db.RolePreCandidate
	case strings.Contains(r, "candidate"):
		return db.RoleCandidate
	case strings.Contains(r, "leader"):
		return db.RoleLeader
	case strings.Contains(r, "follower"):
		return db.RoleFollower
	}
	return r
}

// askState asks n the state probe, by HTTP or by command.
func (p stateProbe) askState(ctx context.Context, n db.Node) (*stateAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	st, v := p.desc.State, p.Vars(n)
	if st.Command.IsSet() {
		return p.stateByCommand(ctx, st.Command.ExpandShell(v))
	}
	doc, err := p.askJSON(ctx, st.Request, n, "state")
	if err != nil {
		return nil, err
	}
	return st.read(func(p Path) (string, bool) {
		vals := p.Get(doc)
		if len(vals) != 1 {
			return "", false
		}
		return Text(vals[0]), true
	})
}

// stateByCommand runs a state command on the controller, in the
// description's directory, and reads the JSON object it prints.
func (p stateProbe) stateByCommand(ctx context.Context, cmd string) (*stateAnswer, error) {
	out, err := control.Output(ctx, control.NewLocal("controller"), "cd "+control.ShellQuote(p.desc.Dir)+" && "+cmd)
	if err != nil {
		return nil, err
	}
	if len(out) > maxStateBytes {
		return nil, fmt.Errorf("state command printed more than %d bytes", maxStateBytes)
	}
	doc, err := Decode(out)
	if err != nil {
		return nil, fmt.Errorf("state command: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("state command: want one JSON object")
	}
	return stateFields().read(func(p Path) (string, bool) {
		v, ok := obj[p.Text]
		if !ok {
			return "", false
		}
		return Text(v), true
	})
}

// stateFields is a State whose paths are the keys a state command prints.
func stateFields() *State {
	path := func(s string) Path { p, _ := ParsePath(s); return p }
	return &State{Self: path("self"), Role: path("role"), Term: path("term"), Leader: path("leader"), Vote: path("vote"),
		Commit: path("commit"), Applied: path("applied"), LastIndex: path("last_index")}
}

// read fills in an answer with get, which returns the text at a path; a
// term is needed, and every index must be a decimal integer.
func (st *State) read(get func(Path) (string, bool)) (*stateAnswer, error) {
	text := func(p Path) string {
		if !p.IsSet() {
			return ""
		}
		s, _ := get(p)
		return s
	}
	a := &stateAnswer{self: text(st.Self), role: text(st.Role), leader: text(st.Leader), vote: text(st.Vote)}
	term, ok := get(st.Term)
	if !ok {
		return nil, errors.New("state: no term in the answer")
	}
	for _, f := range []struct {
		p   Path
		s   string
		dst *uint64
	}{{st.Term, term, &a.term}, {st.Commit, text(st.Commit), &a.commit}, {st.Applied, text(st.Applied), &a.applied},
		{st.LastIndex, text(st.LastIndex), &a.lastIndex}} {
		if f.s == "" || f.s == "null" {
			continue
		}
		v, err := strconv.ParseUint(f.s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("state: %s %q is not a decimal integer", f.p.Text, f.s)
		}
		*f.dst = v
	}
	return a, nil
}

// statesLeader is the Leader capability of a description with a state
// probe and no leader probe: the leader its states show.
type statesLeader struct{ stateProbe }

// Leader implements db.LeaderFinder: among the nodes that answer, the
// one with the highest term that says it leads, or else the leader the
// answers of the highest term name.
func (l statesLeader) Leader(ctx context.Context, nodes []db.Node) (string, error) {
	st, err := l.States(ctx, nodes)
	if err != nil {
		return "", err
	}
	best, bestTerm, named, namedTerm := "", uint64(0), "", uint64(0)
	for _, n := range nodes {
		s, ok := st[n.Name]
		switch {
		case !ok:
		case s.Role == db.RoleLeader && (best == "" || s.Term > bestTerm):
			best, bestTerm = n.Name, s.Term
		case s.Leader != "" && (named == "" || s.Term > namedTerm):
			named, namedTerm = s.Leader, s.Term
		}
	}
	switch {
	case best != "":
		return best, nil
	case named != "":
		return named, nil
	}
	return "", errors.New("no node names a leader")
}
