// Package wal is the write-ahead log of chaos-node: an append-only sequence of
// opaque typed records, split into segment files, made durable by group commit
// and recovered exactly after a crash.
//
// # Use
//
// Open locks the directory; ReadAll replays it (and must come first);
// Save appends with group commit; Write queues records for the next Save's
// write and fsync, without waiting; Compact drops segments a snapshot has made
// redundant; Close releases the lock. Records are opaque to the WAL: it
// knows only their type, the raft index of entry records, and which types
// are header types (see below).
//
// # On-disk format
//
// A WAL directory holds a LOCK file and segment files named
// "<seq>-<index>.wal" with both numbers as 16 zero-padded hex digits. seq
// starts at 1 and increases by one per segment; the sequence of segment files
// present is always contiguous (compaction deletes a prefix). index is the
// Index of the record whose write caused the segment to be cut (0 for a
// segment created empty); it is informational, recovery orders by seq only.
//
// A segment is a 16-byte sync block (syncblock.go: where its records ended
// at its last fsync) followed by a concatenation of records, each
//
//	[u32 length][u32 crc32c][u8 type][u64 index][data]
//
// in little endian, where length is len(data) and the CRC (Castagnoli) covers
// type, index and data. Type 0 is never written, so zero-filled bytes never
// decode as a record. A LOST file in the directory records a loss of
// fsynced records that the WAL's owner has not yet recovered from (lost.go).
//
// # Header records
//
// Records whose type is listed in Options.HeaderTypes are "latest wins"
// state (hard state, snapshot markers). Whenever a segment is cut, the latest
// record of each header type is written at its head, so every segment carries
// the header state current when it began and older segments can be deleted by
// Compact without losing it. Replay therefore sees header records more than
// once; a reader must treat the last one of each type as current.
//
// # Crash safety
//
// Save returns only after its records and every record before them are
// fsynced. Records of Write are durable once a later Save (or Sync) returns;
// a crash before may lose them: they are written with that Save, so a
// process crash loses those not yet written, a power loss those not yet
// fsynced (see below). A segment is created under a
// temporary name, its header records written and fsynced, then renamed into
// place and the directory fsynced, so a crash never leaves a half-made
// segment with a segment name. The previous
// segment is fsynced before the cut. A crash during a write can only damage
// the end of the last segment, past what its sync block says was fsynced:
// ReadAll truncates such a torn tail. Records missing before that end were
// made durable and then lost to damage (a bad disk, a fault): ReadAll
// reports them in RecoveryInfo.Lost. It refuses any other damage with
// ErrCorrupt.
//
// The current segment is preallocated to SegmentBytes, so that appends and
// their fdatasyncs commit no change of size; its zero tail is not damage
// (prealloc.go). A cut or Close trims it to the segment's records. A power
// loss while writes of several pages are unsynced (a Save's before its
// fsync, or Writes until the next Save) can leave a page of zeros before a
// complete record: ReadAll refuses that with ErrCorrupt (a record after
// damage), although nothing acknowledged was lost; a process crash cannot
// leave it, the page cache surviving the process.
package wal
