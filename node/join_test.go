package node

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/node/nodeapi"
)

// A joiner is accepted only as a learner the leader lists at its own peer
// address; otherwise it is refused saying why, and --peers must name a
// member to ask.
func TestJoinRefusals(t *testing.T) {
	c := &Config{Name: "n4", PeerAddr: "10.0.0.4:7001", ClientAddr: "10.0.0.4:7000",
		Peers: map[string]string{"n4": "10.0.0.4:7001"}}
	_, err := askToJoin(context.Background(), c)
	require.ErrorContains(t, err, "--peers names no member but this node")

	resp := nodeapi.MembersResponse{Leader: "n1", Members: []nodeapi.Member{
		{ID: 1, Name: "n1", Peer: "10.0.0.1:7001", Role: nodeapi.RoleVoter},
		{ID: 5, Name: "n5", Peer: "10.0.0.5:7001", Role: nodeapi.RoleLearner}}}
	_, err = findSelf(c, resp, "n1")
	require.ErrorIs(t, err, ErrNotMember)
	require.ErrorContains(t, err, `the leader n1 does not know n4; add it first: POST /members {"name":"n4","peer":"10.0.0.4:7001","client":"10.0.0.4:7000"}`)

	resp.Members = append(resp.Members, nodeapi.Member{ID: 4, Name: "n4", Peer: "10.0.0.4:7001", Role: nodeapi.RoleVoter})
	_, err = findSelf(c, resp, "n1")
	require.ErrorContains(t, err, "n4 is a voter (id 4)")

	resp.Members[2] = nodeapi.Member{ID: 4, Name: "n4", Peer: "10.0.0.9:7001", Role: nodeapi.RoleLearner}
	_, err = findSelf(c, resp, "n1")
	require.ErrorContains(t, err, "knows n4 at peer address 10.0.0.9:7001, not 10.0.0.4:7001")

	resp.Members[2].Peer = c.PeerAddr
	resp.Former = []nodeapi.Member{{ID: 3, Name: "n3", Peer: "10.0.0.3:7001"}}
	j, err := findSelf(c, resp, "n1")
	require.NoError(t, err)
	require.Equal(t, uint64(4), j.ID)
	require.Len(t, j.Members, 4, "the members and the former ones, whose IDs the log names")
}
