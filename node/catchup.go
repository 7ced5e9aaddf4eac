package node

// A node whose storage lost records it had made durable (the WAL's
// RecoveryInfo.Lost: a truncated or zeroed tail, a damaged sync block)
// may have acknowledged entries, or voted, in what it lost. It starts
// abstaining (raft Config.Abstain: it neither votes nor campaigns) and
// earns its vote back by being caught up: it asks for a read index, as a
// linearizable read does, and once the leader's answer is applied here it
// holds every entry committed before it asked. Then it forgets the loss
// durably (wal.CaughtUp) and tells raft (RawNode.Vote). The loss is kept
// in the WAL directory until then, so a restart in between abstains again.

// catchUp is the loop's progress through that.
type catchUp struct {
	read *readRequest // the catch-up read in flight, nil if none
	done bool         // caught up: the loss is forgotten
}

// pollCatchUp moves an abstaining node toward its vote, once per poll of
// the loop: it asks for a catch-up read when none is in flight (one that
// failed, having no leader, is asked again at the next poll), and ends
// the loss once one was served. It must not run while a Ready is being
// handled.
func (s *Server) pollCatchUp(ls *loopState) error {
	c := &ls.catchUp
	if c.done || !s.rn.Abstaining() {
		return nil
	}
	if c.read == nil {
		c.read = &readRequest{done: make(chan readResult, 1)}
		ls.readQueue = append(ls.readQueue, c.read)
		return nil
	}
	var res readResult
	select {
	case res = <-c.read.done:
		c.read = nil
	default:
		return nil
	}
	if res.err != nil {
		return nil
	}
	if err := s.disk.caughtUp(); err != nil {
		return err
	}
	c.done = true
	s.rn.Vote()
	s.log.Info("caught up by the leader after losing durable records: voting again from two election timeouts after the start",
		"applied", ls.applied, "term", s.rn.Status().Term)
	return nil
}
