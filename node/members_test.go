package node

import (
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/node/nodeapi"
	"chaos/raft"
)

// The address book only grows, a name maps to its newest ID, and an ID is
// never given twice, even after the member holding it was removed.
func TestMemberTable(t *testing.T) {
	c := &Config{Peers: map[string]string{"n2": "10.0.0.2:1", "n1": "10.0.0.1:1", "n3": "10.0.0.3:1"},
		ClientAddr: "0.0.0.0:7"}
	tb := newMemberTable(initialMembers(c))
	id, ok := tb.id("n2")
	require.True(t, ok)
	require.Equal(t, uint64(2), id, "initial IDs are the sorted names' positions")
	m, _ := tb.get(3)
	require.Equal(t, nodeapi.Member{ID: 3, Name: "n3", Peer: "10.0.0.3:1", Client: "10.0.0.3:7"}, m)
	require.Equal(t, uint64(4), tb.nextID())

	require.True(t, tb.add(nodeapi.Member{ID: 4, Name: "n3", Peer: "10.0.0.3:1", Role: nodeapi.RoleVoter}))
	require.False(t, tb.add(nodeapi.Member{ID: 4, Name: "n3", Peer: "10.0.0.3:1"}))
	id, _ = tb.id("n3")
	require.Equal(t, uint64(4), id, "a name added back maps to its newest ID")
	require.Equal(t, "n3", tb.name(3), "the old ID keeps its name")
	require.Equal(t, uint64(5), tb.nextID())

	view := tb.view(raft.ConfState{Voters: []uint64{1, 2}, Learners: []uint64{4}})
	require.Equal(t, []nodeapi.Member{
		{ID: 1, Name: "n1", Peer: "10.0.0.1:1", Client: "10.0.0.1:7", Role: nodeapi.RoleVoter},
		{ID: 2, Name: "n2", Peer: "10.0.0.2:1", Client: "10.0.0.2:7", Role: nodeapi.RoleVoter},
		{ID: 4, Name: "n3", Peer: "10.0.0.3:1", Role: nodeapi.RoleLearner},
	}, view)
	require.Equal(t, []nodeapi.Member{{ID: 3, Name: "n3", Peer: "10.0.0.3:1", Client: "10.0.0.3:7"}},
		tb.former(raft.ConfState{Voters: []uint64{1, 2}, Learners: []uint64{4}}), "ID 3 left; n3 is back as 4")
	require.Equal(t, "n1,n3", tb.names([]uint64{4, 1}))

	// An ID given to an entry that never committed, then given again by a
	// later leader to another node: the first name goes back to its own ID.
	tb.add(nodeapi.Member{ID: 5, Name: "n9", Peer: "10.0.0.9:1"})
	tb.add(nodeapi.Member{ID: 5, Name: "n8", Peer: "10.0.0.8:1"})
	_, ok = tb.id("n9")
	require.False(t, ok, "n9 never had another ID")
	id, _ = tb.id("n8")
	require.Equal(t, uint64(5), id)
	tb.add(nodeapi.Member{ID: 6, Name: "n3", Peer: "10.0.0.3:1"})
	tb.add(nodeapi.Member{ID: 6, Name: "n7", Peer: "10.0.0.7:1"})
	id, _ = tb.id("n3")
	require.Equal(t, uint64(4), id, "n3 back to its newest ID before 6")
	require.Equal(t, "9,n1", tb.names([]uint64{9, 1}), "an unknown ID shows as a number")
}

// A snapshot's data carries the configuration and the address book; data
// without voters is refused.
func TestSnapshotImage(t *testing.T) {
	img, err := decodeImage([]byte(`{"voters":[1,2,4],"learners":[5],"members":[{"id":5,"name":"n5","peer":"a:1","client":"a:2","role":""}],"store":{}}`))
	require.NoError(t, err)
	require.Equal(t, raft.ConfState{Voters: []uint64{1, 2, 4}, Learners: []uint64{5}}, img.conf())
	require.Equal(t, "n5", img.Members[0].Name)
	_, err = decodeImage([]byte(`{"voters":[],"store":{}}`))
	require.ErrorContains(t, err, "no voters")
	_, err = decodeImage([]byte(`{"data":{}}`))
	require.ErrorContains(t, err, "no voters", "an old node's store image is refused, not read as empty")
}
