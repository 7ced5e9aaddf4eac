package node

import (
	"encoding/json"
	"fmt"

	"chaos/node/nodeapi"
	"chaos/raft"
)

// snapshotImage is a chaos-node snapshot's data: the configuration as of
// the snapshot's index (raft's ConfState, which the snapshot file does not
// hold otherwise), every member the node knew of (the address book a node
// that installs the snapshot needs to reach them), and the store.
type snapshotImage struct {
	Voters   []uint64         `json:"voters"`
	Learners []uint64         `json:"learners,omitempty"`
	Members  []nodeapi.Member `json:"members"`
	Store    json.RawMessage  `json:"store"`
}

// encodeImage builds the data of a snapshot taken with configuration cs.
func (s *Server) encodeImage(cs raft.ConfState) ([]byte, error) {
	store, err := s.store.Snapshot()
	if err != nil {
		return nil, err
	}
	return json.Marshal(snapshotImage{Voters: cs.Voters, Learners: cs.Learners, Members: s.members.all(), Store: store})
}

// decodeImage parses a snapshot's data.
func decodeImage(data []byte) (snapshotImage, error) {
	var img snapshotImage
	if err := json.Unmarshal(data, &img); err != nil {
		return img, fmt.Errorf("snapshot data: %w (a snapshot of an older chaos-node? remove the data directory)", err)
	}
	if len(img.Voters) == 0 {
		return img, fmt.Errorf("snapshot data: no voters (a snapshot of an older chaos-node? remove the data directory)")
	}
	return img, nil
}

func (img snapshotImage) conf() raft.ConfState {
	return raft.ConfState{Voters: img.Voters, Learners: img.Learners}
}

// restoreImage installs a snapshot's data: its members join the address
// book and the store takes its state.
func (s *Server) restoreImage(img snapshotImage) error {
	s.learnImage(img)
	return s.store.Restore(img.Store)
}

// learnImage adds a snapshot's members to the address book.
func (s *Server) learnImage(img snapshotImage) {
	for _, m := range img.Members {
		s.members.add(m)
	}
}
