//go:build linux

package node_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

const baseFailover = 140

// slowElections make the election timeout long (3 s, randomized to [3 s,
// 6 s)) so that only fast failover can elect within a second.
var slowElections = []string{"--heartbeat-interval", "100ms", "--election-timeout", "3s"}

// A SIGKILLed leader's connections end, and the survivors elect a new
// leader at once rather than after the election timeout; a SIGSTOPped one
// says nothing (its connections stay open), and nobody campaigns before
// the timeout.
func TestIntegrationFastFailover(t *testing.T) {
	c := newCluster(t, baseFailover, 3, slowElections...)
	for round := 1; round <= 2; round++ {
		leader, st := c.waitLeader()
		start := time.Now()
		leader.kill()
		waitFor(t, time.Second, fmt.Sprintf("round %d: a new leader within 1 s of %s's kill (election timeout 3 s)", round, leader.name),
			func() error {
				for _, p := range c.followers(leader) {
					s, err := c.status(p)
					if err != nil {
						return err
					}
					if s.Role == "leader" && s.Term > st.Term {
						return nil
					}
				}
				return fmt.Errorf("no leader after term %d yet", st.Term)
			})
		t.Logf("round %d: %s killed in term %d, replaced after %v", round, leader.name, st.Term, time.Since(start).Round(time.Millisecond))
		leader.start()
		c.waitUp(leader)
	}

	leader, st := c.waitLeader()
	leader.signal(syscall.SIGSTOP)
	t.Cleanup(func() { leader.signal(syscall.SIGCONT) })
	deadline := time.After(2 * time.Second) // within the smallest election timeout, with margin
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for quiet := true; quiet; {
		select {
		case <-deadline:
			quiet = false
		case <-poll.C:
		}
		for _, p := range c.followers(leader) {
			if s, err := c.status(p); err == nil && s.Term > st.Term {
				t.Fatalf("%s moved to term %d within 2 s of %s's pause: a silent leader must wait out the election timeout",
					p.name, s.Term, leader.name)
			}
		}
	}
	leader.signal(syscall.SIGCONT)
}
