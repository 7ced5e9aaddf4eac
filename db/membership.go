package db

import (
	"context"
	"errors"

	"chaos/control"
)

// ErrNoQuorum is wrapped by the error of a Membership's Members when the
// node asked knows no leader and fewer than a majority of the system's
// nodes run: none can be elected, so the membership cannot be asked until
// the stopped nodes run again.
var ErrNoQuorum = errors.New("no quorum")

// Membership is a system whose cluster membership changes at run time
// (the member nemesis): a member is removed, wiped and added back as a new
// member under its old name. Every change is asked of a member that runs
// (via), which hands it to the leader.
type Membership interface {
	// Members returns the names of the voting members and of the learners,
	// asked through via: as the leader has them in force where the system
	// says who leads (chaos-node; an error when via knows no leader, which
	// wraps ErrNoQuorum when fewer than a majority of the nodes run), else
	// as via applied them (etcd, whose removed members stop). A member the
	// system knows without a name yet (added, not started) is named by its
	// node when its address is one of Nodes'. Callers that wipe a node act
	// on this answer, so a lagging node's must not do.
	Members(ctx context.Context, via Node) (voters, learners []string, err error)
	// RemoveMember removes n from the cluster; n not a member is no error.
	RemoveMember(ctx context.Context, via, n Node) error
	// AddMember adds n as a new member (a learner, where the system has
	// them); n a member already is no error.
	AddMember(ctx context.Context, via, n Node) error
	// Rejoin wipes n's data (its logs stay: they belong to the run) and
	// starts it to join the running cluster as the member AddMember made.
	// Later restarts (Start) keep it that member.
	Rejoin(ctx context.Context, r control.Remote, n Node) error
	// Promote makes learner n a voter. It fails, changing nothing, while n
	// has not caught up with the leader; callers retry. n a voter already
	// is no error.
	Promote(ctx context.Context, via, n Node) error
}
