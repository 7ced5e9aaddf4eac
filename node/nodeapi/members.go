package nodeapi

// Member is one member of the cluster as GET /members shows it.
type Member struct {
	// ID is the member's raft ID: the initial members' are their names'
	// positions in sorted order (1, 2, ...); a member added later gets one
	// more than the largest ever given, so an ID is never reused (a node
	// removed and added back is a new member under its old name).
	ID     uint64 `json:"id"`
	Name   string `json:"name"`
	Peer   string `json:"peer"`   // host:port of its raft transport
	Client string `json:"client"` // host:port of its client API
	// Role is "voter" or "learner" (receives the log, does not vote).
	Role string `json:"role"`
}

// The roles of a Member.
const (
	RoleVoter   = "voter"
	RoleLearner = "learner"
)

// MembersResponse answers GET /members and every membership change: the
// configuration in force at the node that answers (raft uses a
// configuration from the moment its entry is appended), sorted by ID.
type MembersResponse struct {
	Members []Member `json:"members"`
	// Leader is the name of the leader the node knows, "" for none.
	Leader string `json:"leader"`
	// Former are the members the node knows of that have left the
	// configuration (Role ""), sorted by ID: their IDs stay taken, and a
	// node that joins needs their names to read the log's older entries.
	Former []Member `json:"former,omitempty"`
}

// AddMemberRequest is POST /members's body: the node to add as a learner.
// It is given the next ID; start it with `chaos node --join`, then promote
// it once it has caught up.
type AddMemberRequest struct {
	Name   string `json:"name"`
	Peer   string `json:"peer"`
	Client string `json:"client"`
}

// AddMemberResponse answers POST /members: the member added (its ID) and
// the configuration after the change.
type AddMemberResponse struct {
	Member Member `json:"member"`
	MembersResponse
}

// Member returns the member named name in r, if any.
func (r MembersResponse) Member(name string) (Member, bool) {
	for _, m := range r.Members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}
