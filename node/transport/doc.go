// Package transport carries raft messages between chaos-node peers over
// long-lived TCP connections, and injects network faults in-process for
// hosts where iptables or netem are not available.
//
// # Wire format
//
// A connection carries frames in one direction only: the dialing node sends,
// the accepting node reads. Each frame is
//
//	[u32 length][u32 crc32c][payload]
//
// in little endian, where length is len(payload) and the CRC (Castagnoli)
// covers the payload. The payload is a batch:
//
//	uvarint count, then count times: uvarint size, message (size bytes)
//
// and a message is encoded by AppendMessage. A frame with count 0 is a
// keepalive. Frames larger than the configured bound (at most MaxFrameBytes)
// are refused by both sides.
//
// # Goroutines
//
// Send never touches the network: it appends to a bounded per-peer queue and
// returns. Each peer has exactly one sender goroutine, which owns that peer's
// outbound connection, its fault pipeline (loss, duplication, delay, reorder)
// and its reconnect backoff; everything waiting is written as one frame with
// one Write call. The accepting side runs one accept goroutine and one reader
// goroutine per inbound connection, which calls Config.Handler with each
// received batch. No goroutine is started per message or per batch.
//
// # Failure handling
//
// A write error or a closed connection drops the batch being written (raft
// retransmits) and the sender redials with capped exponential backoff. A
// frame with a bad checksum, an oversize length, an undecodable payload or
// messages not addressed to this node closes that inbound connection with a
// log line naming the remote address; other connections are unaffected.
// Inbound connections idle for longer than Config.IdleTimeout are closed, so
// connections left half-open by a partition do not accumulate; senders write
// keepalive frames to keep healthy idle connections open.
package transport
