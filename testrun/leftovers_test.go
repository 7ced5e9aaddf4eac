package testrun

import (
	"bytes"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/history"
	"chaos/history/faultrec"
	"chaos/nemesis"
)

// The setup's heal op is the history's first line, at time 0, and the
// summary line names what was removed node by node, in the nodes' order.
func TestLeftoversRecordedFirst(t *testing.T) {
	var buf bytes.Buffer
	r := &run{cl: &cluster.Cluster{Nodes: cluster.Nodes([]string{"h1", "h2", "h3"})},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		rec: history.NewRecorder(&buf, func() time.Duration { return 0 }, history.RecorderOptions{}),
		leftovers: nemesis.Op{F: history.FHeal, Value: faultrec.Heal{Leftovers: map[string][]string{
			"n3": {"etcd process 7, paused"}, "n1": {"iptables chain CHAOS-PARTITION (2 rules)", "tc root qdisc c4a5: on eth0"}}}}}
	assert.Equal(t, "n1: iptables chain CHAOS-PARTITION (2 rules), tc root qdisc c4a5: on eth0; n3: etcd process 7, paused",
		r.describeLeftovers(r.leftovers))
	r.recordLeftovers()
	require.NoError(t, r.rec.Close())
	assert.JSONEq(t, `{"index":0,"time":0,"process":"nemesis","type":"info","f":"heal","value":{"leftovers":{
		"n1":["iptables chain CHAOS-PARTITION (2 rules)","tc root qdisc c4a5: on eth0"],"n3":["etcd process 7, paused"]}}}`,
		buf.String())

	// Nothing found: nothing recorded.
	buf.Reset()
	r.rec = history.NewRecorder(&buf, func() time.Duration { return 0 }, history.RecorderOptions{})
	r.leftovers = nemesis.Op{}
	r.recordLeftovers()
	require.NoError(t, r.rec.Close())
	assert.Empty(t, buf.String())
}
