package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
)

// Every segment begins with a sync block: where its records ended at the
// segment's last fsync,
//
//	[u32 magic "CWSB"][u32 crc32c of end][u64 end]
//
// in little endian, end counting from the start of the file (the block
// included). It is rewritten in place before every fsync of the segment,
// so the same fsync makes it and the records it counts durable together.
//
// It is what lets recovery tell a torn write from lost durable records.
// A crash can only tear what was not yet fsynced, which lies past end; a
// segment whose valid records stop short of end lost records it had made
// durable (a truncation at a record boundary, or a zeroed or damaged
// tail), which nothing but damage does. A crash during an fsync may make
// the block durable without all of its records: recovery then reports a
// loss that is only a torn write, which costs the node a catch-up, never
// safety.
const (
	// SyncBlockBytes is the sync block's size: a segment's first record
	// begins at this offset.
	SyncBlockBytes = 16
	syncBlockMagic = 0x42535743 // "CWSB" read as little endian
)

// errSyncBlock: the block does not decode (damaged, or the file is
// shorter than a block).
var errSyncBlock = errors.New("sync block damaged")

// encodeSyncBlock returns the sync block saying that records end at end.
func encodeSyncBlock(end int64) []byte {
	b := make([]byte, SyncBlockBytes)
	binary.LittleEndian.PutUint32(b[0:], syncBlockMagic)
	binary.LittleEndian.PutUint64(b[8:], uint64(end))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(b[8:], castagnoli))
	return b
}

// decodeSyncBlock returns the end the segment data's sync block records,
// or errSyncBlock.
func decodeSyncBlock(data []byte) (int64, error) {
	if len(data) < SyncBlockBytes || binary.LittleEndian.Uint32(data[0:]) != syncBlockMagic ||
		binary.LittleEndian.Uint32(data[4:]) != crc32.Checksum(data[8:SyncBlockBytes], castagnoli) {
		return 0, errSyncBlock
	}
	end := binary.LittleEndian.Uint64(data[8:])
	if end < SyncBlockBytes || end > math.MaxInt64 {
		return 0, errSyncBlock
	}
	return int64(end), nil
}

// writeSyncBlock records in f, the current segment, that its records end
// at end; the caller fsyncs f next.
func writeSyncBlock(f *os.File, end int64) error {
	if _, err := f.WriteAt(encodeSyncBlock(end), 0); err != nil {
		return fmt.Errorf("write sync block of %s: %w", f.Name(), err)
	}
	return nil
}
