package db

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"slices"

	"chaos/control"
)

// etcdMember is a member as etcd's cluster API (v3 JSON gateway) lists it;
// IDs are decimal strings. A member added and not started has no name yet.
type etcdMember struct {
	ID        string   `json:"ID"`
	Name      string   `json:"name"`
	PeerURLs  []string `json:"peerURLs"`
	IsLearner bool     `json:"isLearner"`
}

func (e *Etcd) cluster(ctx context.Context, via Node, call string, in, out any) error {
	url := "http://" + e.ClientAddr(via) + "/v3/cluster/member/" + call
	return etcdCall(ctx, &http.Client{Timeout: memberTimeout}, url, in, out)
}

// memberList lists the members, as via sees them.
func (e *Etcd) memberList(ctx context.Context, via Node) ([]etcdMember, error) {
	var ms struct {
		Members []etcdMember `json:"members"`
	}
	err := e.cluster(ctx, via, "list", struct{}{}, &ms)
	return ms.Members, wrap(via, "etcd member list", err)
}

// nameOf is m's node name: its own, or the node whose peer URL it has.
func (e *Etcd) nameOf(m etcdMember) string {
	if m.Name != "" {
		return m.Name
	}
	for _, n := range e.Nodes {
		if slices.Contains(m.PeerURLs, e.peerURL(n)) {
			return n.Name
		}
	}
	return "id " + m.ID
}

// find returns n's entry in the member list.
func (e *Etcd) find(ctx context.Context, via, n Node) (etcdMember, bool, error) {
	ms, err := e.memberList(ctx, via)
	if err != nil {
		return etcdMember{}, false, err
	}
	i := slices.IndexFunc(ms, func(m etcdMember) bool { return e.nameOf(m) == n.Name })
	if i < 0 {
		return etcdMember{}, false, nil
	}
	return ms[i], true, nil
}

// Members lists voters and learners through via.
func (e *Etcd) Members(ctx context.Context, via Node) (voters, learners []string, err error) {
	ms, err := e.memberList(ctx, via)
	for _, m := range ms {
		if m.IsLearner {
			learners = append(learners, e.nameOf(m))
		} else {
			voters = append(voters, e.nameOf(m))
		}
	}
	return voters, learners, err
}

// RemoveMember removes n (etcd member remove).
func (e *Etcd) RemoveMember(ctx context.Context, via, n Node) error {
	m, ok, err := e.find(ctx, via, n)
	if err != nil || !ok {
		return err
	}
	err = e.cluster(ctx, via, "remove", map[string]string{"ID": m.ID}, &struct{}{})
	return wrap(n, fmt.Sprintf("etcd member remove %s through %s", m.ID, via.Name), err)
}

// AddMember adds n as a learner (etcd member add --learner).
func (e *Etcd) AddMember(ctx context.Context, via, n Node) error {
	if _, ok, err := e.find(ctx, via, n); err != nil || ok {
		return err
	}
	in := map[string]any{"peerURLs": []string{e.peerURL(n)}, "isLearner": true}
	return wrap(n, "etcd member add through "+via.Name, e.cluster(ctx, via, "add", in, &struct{}{}))
}

// Rejoin removes n's data directory and starts it into the existing
// cluster (--initial-cluster-state existing; its later restarts find their
// data and ignore the initial flags).
func (e *Etcd) Rejoin(ctx context.Context, r control.Remote, n Node) error {
	if err := Run(ctx, r, "rm -rf "+control.ShellQuote(path.Join(e.Layout.NodeDir(etcdName, n), "data"))); err != nil {
		return wrap(n, "wipe data", err)
	}
	argv := e.argv(n)
	if i := slices.Index(argv, "--initial-cluster-state"); i >= 0 {
		argv[i+1] = "existing"
	}
	return wrap(n, "start etcd into the existing cluster", e.daemon(n).Start(ctx, r, argv))
}

// Promote promotes learner n (etcd member promote), which etcd refuses
// until the learner is in sync with the leader.
func (e *Etcd) Promote(ctx context.Context, via, n Node) error {
	m, ok, err := e.find(ctx, via, n)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%s: promote: not a member", n.Name)
	case !m.IsLearner:
		return nil
	}
	err = e.cluster(ctx, via, "promote", map[string]string{"ID": m.ID}, &struct{}{})
	return wrap(n, fmt.Sprintf("etcd member promote %s through %s", m.ID, via.Name), err)
}

var _ Membership = (*Etcd)(nil)
