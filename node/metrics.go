package node

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the node's Prometheus metrics, on a registry of its own.
type metrics struct {
	reg          *prometheus.Registry
	proposals    prometheus.Counter
	applies      prometheus.Counter
	elections    prometheus.Counter
	readIndexes  prometheus.Counter
	commitIndex  prometheus.Gauge
	appliedIndex prometheus.Gauge
	term         prometheus.Gauge
	isLeader     prometheus.Gauge
	fsync        prometheus.Histogram
	requests     *prometheus.HistogramVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		proposals: prometheus.NewCounter(prometheus.CounterOpts{Name: "chaos_node_proposals_total",
			Help: "Commands proposed to raft by this node while leading."}),
		applies: prometheus.NewCounter(prometheus.CounterOpts{Name: "chaos_node_applies_total",
			Help: "Log entries applied to the state machine."}),
		elections: prometheus.NewCounter(prometheus.CounterOpts{Name: "chaos_node_elections_total",
			Help: "Elections this node started (became candidate)."}),
		readIndexes: prometheus.NewCounter(prometheus.CounterOpts{Name: "chaos_node_read_indexes_total",
			Help: "Read indexes asked for, each ask again after an election timeout unanswered counted too; one serves every linearizable read queued while the one before was asked."}),
		commitIndex: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chaos_node_commit_index",
			Help: "Highest log index known committed."}),
		appliedIndex: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chaos_node_applied_index",
			Help: "Highest log index applied."}),
		term: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chaos_node_term", Help: "Current raft term."}),
		isLeader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chaos_node_is_leader",
			Help: "1 while this node leads."}),
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "chaos_node_wal_fsync_seconds",
			Help: "Time to make one Ready's state durable (write + fsync), for the Readys raft says must be.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "chaos_node_request_seconds",
			Help: "Client request latency by operation and status code.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)},
			[]string{"op", "code"}),
	}
	m.reg.MustRegister(m.proposals, m.applies, m.elections, m.readIndexes, m.commitIndex, m.appliedIndex, m.term,
		m.isLeader, m.fsync, m.requests, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
