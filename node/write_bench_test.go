package node

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"chaos/node/nodeapi"
)

// benchCluster starts three in-process nodes on 127.0.0.16x with real
// storage (fsync on) in a temporary directory, and returns a client of
// the leader and the servers.
func benchCluster(b *testing.B) (*nodeapi.Client, []*Server) {
	b.Helper()
	peers, clients := map[string]string{}, map[string]string{}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("n%d", i)
		peers[name] = fmt.Sprintf("127.0.0.16%d:7401", i)
		clients[name] = fmt.Sprintf("127.0.0.16%d:7400", i)
	}
	dir := b.TempDir()
	var servers []*Server
	for name := range peers {
		s, err := New(Config{Name: name, DataDir: dir + "/" + name, ClientAddr: clients[name], PeerAddr: peers[name],
			Peers: peers, ClientAddrs: clients, HeartbeatInterval: 100 * time.Millisecond,
			ElectionTimeout: time.Second, RequestTimeout: 5 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Stop(context.Background()) })
		servers = append(servers, s)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st, err := nodeapi.NewClient(clients["n1"], hc).Status(context.Background())
		if err == nil && st.Leader != "" {
			return nodeapi.NewClient(clients[st.Leader], hc), servers
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatal("no leader within 20 s")
	return nil, nil
}

// syncs is the WAL fsyncs of servers so far.
func syncs(servers []*Server) (n uint64) {
	for _, s := range servers {
		n += s.disk.wal.Stats().Syncs
	}
	return n
}

// BenchmarkWritePath measures chaos-node's write path end to end: HTTP
// puts from 64 concurrent clients to the leader of three nodes, through
// raft, the transport and the WAL (fsync on) to the state machine and back.
func BenchmarkWritePath(b *testing.B) {
	leader, servers := benchCluster(b)
	var client atomic.Uint64
	b.SetParallelism(32) // 64 clients on 2 cores
	b.ReportAllocs()
	cpu, fsyncs := cpuTime(b), syncs(servers)
	persistS, persists := persistTime(b, servers)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := client.Add(1)
		var seq uint64
		for pb.Next() {
			seq++
			key := "k" + strconv.FormatUint(seq%1000, 10)
			if err := leader.Put(context.Background(), key, "0000000000000042", nodeapi.WriteID{Client: id, Seq: seq}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	// CPU time per write of the whole process (three nodes and the
	// clients): unlike writes/s, it holds still on a busy machine.
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-us/write")
	// WAL fsyncs of the three nodes per write: what group commit saves.
	b.ReportMetric(float64(syncs(servers)-fsyncs)/float64(b.N), "fsyncs/write")
	// Mean time of one Ready's write and fsync, over the three nodes: the
	// step every write waits for at least twice (the leader's and a
	// follower's, side by side, then the one in progress when the commit
	// arrives).
	endS, end := persistTime(b, servers)
	b.ReportMetric((endS-persistS)/float64(max(end-persists, 1))*1e3, "ms/persist")
}

// persistTime is the total time the servers spent making Readys durable,
// and how many they made durable.
func persistTime(b *testing.B, servers []*Server) (seconds float64, count uint64) {
	for _, s := range servers {
		var m dto.Metric
		if err := s.metrics.fsync.Write(&m); err != nil {
			b.Fatal(err)
		}
		seconds += m.GetHistogram().GetSampleSum()
		count += m.GetHistogram().GetSampleCount()
	}
	return seconds, count
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
