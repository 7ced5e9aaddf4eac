package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"chaos/internal/atomicfile"
	"chaos/node/nodeapi"
)

// joinFile, in the data directory, records that the node joined a running
// cluster: its ID and the members the cluster named when it joined. A node
// restarted with it is that member again, with or without --join.
const joinFile = "join.json"

// joined is joinFile's content.
type joined struct {
	ID uint64 `json:"id"`
	// Members are every member the cluster knew of when the node joined,
	// former ones included (the names of the IDs in the log's entries).
	Members []nodeapi.Member `json:"members"`
}

// ErrNotMember is what New returns when a joining node is not a learner of
// the cluster it asked; nothing was written.
var ErrNotMember = errors.New("not a learner of the cluster")

// loadJoined reads joinFile; ok is false when the node never joined.
func loadJoined(dataDir string) (j joined, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, joinFile))
	if errors.Is(err, os.ErrNotExist) {
		return j, false, nil
	}
	if err != nil {
		return j, false, err
	}
	if err := json.Unmarshal(b, &j); err != nil || j.ID == 0 {
		return j, false, fmt.Errorf("%s: malformed (%v); remove the data directory to join afresh", joinFile, err)
	}
	return j, true, nil
}

// saveJoined writes joinFile durably (the data directory is created).
func saveJoined(dataDir string, j joined) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dataDir, joinFile), b, 0o644)
}

// askToJoin asks the peers (every one in the flags but this node) for the
// membership, and finds this node in the leader's: it must have been added
// as a learner (POST /members) under its name and peer address. A peer
// that does not lead passes the question on to the leader it names: its
// own view may lag, or it may have been removed.
func askToJoin(ctx context.Context, c *Config) (joined, error) {
	hc := &http.Client{Timeout: c.RequestTimeout}
	var errs []string
	for _, name := range slices.Sorted(maps.Keys(c.Peers)) {
		if name == c.Name {
			continue
		}
		addr := c.clientAddrOf(name)
		resp, err := leaderView(ctx, hc, addr)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s (%s): %v", name, addr, err))
			continue
		}
		return findSelf(c, resp, resp.Leader)
	}
	if len(errs) == 0 {
		return joined{}, fmt.Errorf("--peers names no member but this node; name the members to ask")
	}
	return joined{}, fmt.Errorf("no leader answered GET /members: %s", strings.Join(errs, "; "))
}

// leaderView asks the node at addr for GET /members, and its leader when
// it does not lead.
func leaderView(ctx context.Context, hc *http.Client, addr string) (nodeapi.MembersResponse, error) {
	resp, err := nodeapi.NewClient(addr, hc).Members(ctx)
	if err != nil {
		return resp, err
	}
	if resp.Leader == "" {
		return resp, fmt.Errorf("it knows no leader")
	}
	l, ok := resp.Member(resp.Leader)
	if !ok || l.Client == addr {
		return resp, nil // it leads (a leader removing itself is not listed: take its word)
	}
	if resp, err = nodeapi.NewClient(l.Client, hc).Members(ctx); err != nil {
		return resp, fmt.Errorf("its leader %s (%s): %w", l.Name, l.Client, err)
	}
	if m, ok := resp.Member(resp.Leader); !ok || m.Client != l.Client {
		return resp, fmt.Errorf("its leader %s no longer leads", l.Name)
	}
	return resp, nil
}

// findSelf finds the joining node in the member list of the leader peer.
func findSelf(c *Config, resp nodeapi.MembersResponse, peer string) (joined, error) {
	m, ok := resp.Member(c.Name)
	switch {
	case !ok:
		return joined{}, fmt.Errorf("%w: the leader %s does not know %s; add it first: POST /members {\"name\":%q,\"peer\":%q,\"client\":%q}",
			ErrNotMember, peer, c.Name, c.Name, c.PeerAddr, c.ClientAddr)
	case m.Role != nodeapi.RoleLearner:
		return joined{}, fmt.Errorf("%w: %s is a voter (id %d) at %s; a node with an empty log must not take a voter's place: remove it and add it again",
			ErrNotMember, c.Name, m.ID, peer)
	case m.Peer != c.PeerAddr:
		return joined{}, fmt.Errorf("%w: %s knows %s at peer address %s, not %s", ErrNotMember, peer, c.Name, m.Peer, c.PeerAddr)
	}
	return joined{ID: m.ID, Members: append(resp.Members, resp.Former...)}, nil
}

// joinTimeout bounds the whole of askToJoin.
const joinTimeout = 10 * time.Second

// identify finds out who this node is before anything is written: the
// member it joined as (joinFile), a new joiner (it asks the cluster), or
// an initial member (its name's position in the sorted peer flags).
func (s *Server) identify() error {
	c := &s.cfg
	j, ok, err := loadJoined(c.DataDir)
	switch {
	case err != nil:
		return err
	case !ok && c.Join && hasState(c.DataDir):
		return fmt.Errorf("%w: --join: %s holds a node's state but no %s: it is not a member that joined; remove it to join afresh",
			ErrConfig, c.DataDir, joinFile)
	case !ok && c.Join:
		ctx, cancel := context.WithTimeout(context.Background(), joinTimeout)
		defer cancel()
		if j, err = askToJoin(ctx, c); err != nil {
			return fmt.Errorf("join: %w", err)
		}
		if err := saveJoined(c.DataDir, j); err != nil {
			return fmt.Errorf("join: %w", err)
		}
	case !ok:
		if c.Peers[c.Name] == "" {
			return fmt.Errorf("%w: node %s is not in the peer list (to join a running cluster, start it with --join)", ErrConfig, c.Name)
		}
		s.members = newMemberTable(initialMembers(c))
		s.id, _ = s.members.id(c.Name)
		return nil
	}
	s.id, s.joined, s.members = j.ID, true, newMemberTable(j.Members)
	s.members.add(nodeapi.Member{ID: j.ID, Name: c.Name, Peer: c.PeerAddr, Client: c.ClientAddr})
	return nil
}

// hasState reports whether dataDir holds a WAL or snapshots.
func hasState(dataDir string) bool {
	for _, sub := range []string{"wal", "snap"} {
		if ents, err := os.ReadDir(filepath.Join(dataDir, sub)); err == nil && len(ents) > 0 {
			return true
		}
	}
	return false
}
