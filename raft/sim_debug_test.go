package raft

import "fmt"

// dumpState describes every node and, for the leader, its view of the followers.
func (s *simulation) dumpState() string {
	out := ""
	for _, n := range s.nodes {
		if n.rn == nil {
			out += fmt.Sprintf("n%d down\n", n.id)
			continue
		}
		st := n.rn.Status()
		out += fmt.Sprintf("n%d %v term=%d lead=%d commit=%d applied=%d last=%d snap=%d conf=%v\n",
			n.id, st.Role, st.Term, st.Lead, st.Commit, st.Applied, st.LastIndex, st.SnapshotIndex, st.Conf)
		if st.Role == Leader {
			for _, id := range n.rn.r.members {
				pr := n.rn.r.prs[id]
				out += fmt.Sprintf("   -> n%d match=%d next=%d state=%v probeSent=%v active=%v inflight=%d\n",
					id, pr.Match, pr.Next, pr.State, pr.probeSent, pr.recentActive, len(pr.inflights.buf))
			}
		}
	}
	return out
}
