package db

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// etcdLeaderTimeout bounds one Leader call, whatever ctx allows: the
// progress line asks every second, and a paused member never answers.
const etcdLeaderTimeout = time.Second

// etcdMaxStatusBytes bounds an answer of the maintenance or cluster API.
const etcdMaxStatusBytes = 1 << 20

// Leader implements LeaderFinder through etcd's v3 JSON gateway. It asks
// every node's maintenance status at once (POST /v3/maintenance/status),
// which names the member that answered and the leader it follows, ids as
// decimal strings; among the members that follow one, it believes the one
// with the highest Raft term, as a member cut off from the others may still
// name an old leader. The id is turned into a name with the ids of the
// members that answered, or failing that with the member list (POST
// /v3/cluster/member/list), whose names are our node names (--name).
// Nodes that do not answer within etcdLeaderTimeout are skipped.
func (e *Etcd) Leader(ctx context.Context, nodes []Node) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, etcdLeaderTimeout)
	defer cancel()
	endpoints := make([]string, len(nodes))
	for i, n := range nodes {
		endpoints[i] = "http://" + e.ClientAddr(n)
	}
	return etcdLeader(ctx, &http.Client{}, nodes, endpoints)
}

// etcdStatus is the part of a maintenance status answer Leader and
// States read.
type etcdStatus struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader   string `json:"leader"`   // absent or "0" when the member follows none
	RaftTerm string `json:"raftTerm"` // absent when 0
	// RaftIndex is the member's commit index, RaftAppliedIndex its
	// applied index (etcd 3.4 and later).
	RaftIndex        string `json:"raftIndex"`
	RaftAppliedIndex string `json:"raftAppliedIndex"`
}

// etcdMembers is the part of a member list answer Leader reads.
type etcdMembers struct {
	Members []struct {
		ID   string `json:"ID"`
		Name string `json:"name"`
	} `json:"members"`
}

// etcdLeader is Leader over the gateways at endpoints (endpoints[i] is
// nodes[i]'s base URL), within ctx, which must have a deadline: the
// statuses get half of the time left, so that a member that never answers
// leaves time for the member list.
func etcdLeader(ctx context.Context, client *http.Client, nodes []Node, endpoints []string) (string, error) {
	statuses := etcdStatuses(ctx, client, endpoints)
	best, bestTerm := -1, uint64(0)
	names := map[string]string{} // member id -> node name, for those that answered
	for i, st := range statuses {
		if st == nil {
			continue
		}
		names[st.Header.MemberID] = nodes[i].Name
		term, _ := strconv.ParseUint(st.RaftTerm, 10, 64)
		if st.Leader != "" && st.Leader != "0" && (best < 0 || term > bestTerm) {
			best, bestTerm = i, term
		}
	}
	if best < 0 {
		return "", errors.New("no etcd member reports a leader")
	}
	id := statuses[best].Leader
	if name, ok := names[id]; ok {
		return name, nil
	}
	var ms etcdMembers
	if err := etcdPost(ctx, client, endpoints[best]+"/v3/cluster/member/list", &ms); err != nil {
		return "", fmt.Errorf("name of etcd leader %s: %w", id, err)
	}
	for _, m := range ms.Members {
		if m.ID == id && m.Name != "" {
			return m.Name, nil
		}
	}
	return "", fmt.Errorf("etcd leader %s is not in %s's member list", id, nodes[best].Name)
}

// etcdStatuses asks every endpoint's maintenance status at once, within
// half of the time ctx has left; statuses[i] is nil when endpoints[i] did
// not answer.
func etcdStatuses(ctx context.Context, client *http.Client, endpoints []string) []*etcdStatus {
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/2)
		defer cancel()
	}
	statuses := make([]*etcdStatus, len(endpoints))
	var wg sync.WaitGroup
	for i, url := range endpoints {
		wg.Go(func() {
			var st etcdStatus
			if etcdPost(ctx, client, url+"/v3/maintenance/status", &st) == nil {
				statuses[i] = &st
			}
		})
	}
	wg.Wait()
	return statuses
}

// etcdPost POSTs {} to url and decodes a 200 answer into out.
func etcdPost(ctx context.Context, client *http.Client, url string, out any) error {
	return etcdCall(ctx, client, url, struct{}{}, out)
}

// etcdCall POSTs in, as JSON, to url and decodes a 200 answer into out.
func etcdCall(ctx context.Context, client *http.Client, url string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, etcdMaxStatusBytes))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %.200s", url, resp.StatusCode, body)
	}
	return json.Unmarshal(body, out)
}
