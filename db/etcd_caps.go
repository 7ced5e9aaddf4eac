package db

import "time"

// etcd's timing: chaos starts it without --heartbeat-interval and
// --election-timeout, so with its defaults.
const (
	etcdHeartbeat = 100 * time.Millisecond
	etcdElection  = time.Second
	etcdRecovery  = 5 * time.Second
)

// Capabilities are etcd's: its leader from the maintenance status of its
// v3 JSON gateway, and its default timing. etcd keeps no event log of
// chaos's format and has no fault hooks.
func (e *Etcd) Capabilities() Capabilities {
	return Capabilities{Leader: e, Timing: Timing{Heartbeat: etcdHeartbeat, ElectionTimeout: etcdElection, Recovery: etcdRecovery}}
}
