package raft

import (
	"testing"
)

// benchCluster is a minimal in-memory cluster for throughput benchmarks:
// messages are delivered at once, storage is the core's own memory.
type benchCluster struct {
	nodes   []*RawNode
	inbox   []Message
	applied int
}

func newBenchCluster(b *testing.B, n int) *benchCluster {
	c := &benchCluster{}
	peers := make([]uint64, n)
	for i := range peers {
		peers[i] = uint64(i + 1)
	}
	for _, id := range peers {
		rn, err := NewRawNode(Config{ID: id, Peers: peers, ElectionTick: 10, HeartbeatTick: 1,
			Seed: id, PreVote: true, CheckQuorum: true, MaxInflightMsgs: 256}, State{})
		if err != nil {
			b.Fatal(err)
		}
		c.nodes = append(c.nodes, rn)
	}
	// Fresh nodes with CheckQuorum refuse votes for one election timeout.
	for range 10 {
		for _, rn := range c.nodes[1:] {
			rn.Tick()
		}
	}
	c.nodes[0].Campaign()
	c.settle()
	if c.nodes[0].Status().Role != Leader {
		b.Fatal("node 1 did not become leader")
	}
	return c
}

// settle processes Ready and delivers messages until the cluster is quiet.
func (c *benchCluster) settle() {
	for {
		busy := false
		for _, rn := range c.nodes {
			if !rn.HasReady() {
				continue
			}
			busy = true
			rd := rn.Ready()
			c.inbox = append(c.inbox, rd.Messages...)
			if rn == c.nodes[0] {
				c.applied += len(rd.CommittedEntries)
			}
			rn.Advance()
		}
		msgs := c.inbox
		c.inbox = c.inbox[len(c.inbox):]
		for _, m := range msgs {
			_ = c.nodes[m.To-1].Step(m)
			busy = true
		}
		if !busy {
			return
		}
	}
}

// BenchmarkCommitThreeNodes measures committed proposals per second and
// allocations per proposal for a three-node cluster, proposals batched 64 to
// a round as a busy server's event loop would.
func BenchmarkCommitThreeNodes(b *testing.B) {
	for _, batch := range []int{1, 64} {
		b.Run(map[int]string{1: "batch=1", 64: "batch=64"}[batch], func(b *testing.B) {
			c := newBenchCluster(b, 3)
			cmd := make([]byte, 100)
			cmds := make([][]byte, batch)
			for i := range cmds {
				cmds[i] = cmd
			}
			start := c.applied
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				if _, err := c.nodes[0].Propose(cmds...); err != nil {
					b.Fatal(err)
				}
				c.settle()
			}
			b.StopTimer()
			committed := c.applied - start
			if committed < b.N {
				b.Fatalf("committed %d of %d proposals", committed, b.N)
			}
			b.ReportMetric(float64(committed)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}
