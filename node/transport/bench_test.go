package transport

import (
	"bufio"
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"chaos/raft"
)

// BenchmarkEncodeDecode round-trips one MsgApp of 64 entries of 100 bytes
// through AppendMessage (into a reused buffer) and DecodeMessage.
func BenchmarkEncodeDecode(b *testing.B) {
	m := msgApp(64, 100)
	buf := AppendMessage(nil, m)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendMessage(buf[:0], m)
		if _, err := DecodeMessage(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrameWriteRead writes a batch of 16 such MsgApps as one frame and
// reads it back, as a connection does.
func BenchmarkFrameWriteRead(b *testing.B) {
	batch := make([]raft.Message, 16)
	for i := range batch {
		batch[i] = msgApp(64, 100)
	}
	var stream bytes.Buffer
	scratch, _ := WriteFrame(&stream, batch, nil)
	b.SetBytes(int64(stream.Len()))
	b.ReportAllocs()
	br := bufio.NewReader(&stream)
	for b.Loop() {
		stream.Reset()
		var err error
		if scratch, err = WriteFrame(&stream, batch, scratch); err != nil {
			b.Fatal(err)
		}
		br.Reset(&stream)
		if _, err := ReadFrame(br, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransportThroughput sends messages from one transport to another
// over loopback TCP in Send calls of 64, keeping at most window messages in
// flight so that no queue overflows, and reports delivered messages/s.
func BenchmarkTransportThroughput(b *testing.B) {
	for _, tc := range []struct {
		name string
		msg  raft.Message
	}{
		{"heartbeat", heartbeats(1, 2, 0, 1)[0]},
		{"msgapp-1x100B", msgApp(1, 100)},
		{"msgapp-64x100B", msgApp(64, 100)},
	} {
		b.Run(tc.name, func(b *testing.B) { benchmarkThroughput(b, tc.msg) })
	}
}

func benchmarkThroughput(b *testing.B, msg raft.Message) {
	const sendBatch, window = 64, 2048
	var received atomic.Int64
	progress := make(chan struct{}, 1)
	c := newCluster(b, 2, func(id uint64, cfg *Config) {
		if id == 2 {
			cfg.Handler = func(msgs []raft.Message) {
				received.Add(int64(len(msgs)))
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		}
	})
	batch := make([]raft.Message, sendBatch)
	for i := range batch {
		batch[i] = msg
	}
	b.SetBytes(int64(MessageSize(&msg)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for sent := 0; sent < b.N; {
		for int64(sent)-received.Load() > window {
			<-progress
		}
		n := min(sendBatch, b.N-sent)
		c.nodes[1].Send(batch[:n])
		sent += n
	}
	for received.Load() < int64(b.N) {
		<-progress
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	if d := c.nodes[1].Stats().Peers[2].Dropped; d != 0 {
		b.Fatalf("%d messages dropped", d)
	}
}
