package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Record is one typed record. Index is the raft log index for entry records
// and 0 for the others. Type 0 is reserved and rejected by Save.
type Record struct {
	Type  uint8
	Index uint64
	Data  []byte
}

const (
	// MaxRecordBytes bounds len(Record.Data). Save refuses larger records and
	// the decoder refuses larger length fields, so a garbage length can never
	// make recovery allocate more than this per record.
	MaxRecordBytes = 64 << 20

	// recordHeaderBytes is the encoded size of a record without its data:
	// length (4), crc (4), type (1), index (8).
	recordHeaderBytes = 4 + 4 + 1 + 8
)

// Reasons a byte string does not decode as a record. They are internal:
// ReadAll turns them into a torn tail or an ErrCorrupt that names the place.
var (
	errShortRecord    = errors.New("record extends past the end of the data")
	errRecordTooLarge = errors.New("record length exceeds the limit")
	errChecksum       = errors.New("record checksum mismatch")
	errZeroType       = errors.New("record type is 0")
)

// castagnoli is the CRC32C table; it is never written after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodedSize is the number of bytes encodeRecord appends for r.
func encodedSize(r Record) int { return recordHeaderBytes + len(r.Data) }

// validateRecord reports why r cannot be saved, or nil.
func validateRecord(r Record) error {
	if r.Type == 0 {
		return fmt.Errorf("record with index %d: %w", r.Index, errZeroType)
	}
	if len(r.Data) > MaxRecordBytes {
		return fmt.Errorf("record with index %d: %d data bytes, limit %d: %w",
			r.Index, len(r.Data), MaxRecordBytes, errRecordTooLarge)
	}
	return nil
}

// encodeRecord appends the encoding of r to dst and returns the extended
// slice. r must have passed validateRecord.
func encodeRecord(dst []byte, r Record) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.Data)))
	dst = binary.LittleEndian.AppendUint32(dst, 0) // crc, filled in below
	dst = append(dst, r.Type)
	dst = binary.LittleEndian.AppendUint64(dst, r.Index)
	dst = append(dst, r.Data...)
	crc := crc32.Checksum(dst[start+8:], castagnoli)
	binary.LittleEndian.PutUint32(dst[start+4:], crc)
	return dst
}

// decodeRecord decodes the record at the start of b and returns it with the
// number of bytes it occupies. It never allocates: the returned Data aliases
// b, so a caller that keeps the record beyond b's lifetime must copy it. The
// length field is checked against MaxRecordBytes and len(b) before anything
// else is read. On error n is 0 and the error is one of errShortRecord,
// errRecordTooLarge, errChecksum or errZeroType.
func decodeRecord(b []byte) (r Record, n int, err error) {
	end, err := frameEnd(b)
	if err != nil {
		return Record{}, 0, err
	}
	if crc32.Checksum(b[8:end], castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return Record{}, 0, errChecksum
	}
	return decodeUnchecked(b)
}

// frameEnd is where the record at the start of b ends by its length
// field, checked against MaxRecordBytes and len(b).
func frameEnd(b []byte) (int, error) {
	if len(b) < recordHeaderBytes {
		return 0, errShortRecord
	}
	length := binary.LittleEndian.Uint32(b)
	if length > MaxRecordBytes {
		return 0, errRecordTooLarge
	}
	end := recordHeaderBytes + int(length)
	if end > len(b) {
		return 0, errShortRecord
	}
	return end, nil
}

// decodeUnchecked is decodeRecord without the checksum: the TrustCorrupt
// planted bug's decoder. It still checks the length and the type.
func decodeUnchecked(b []byte) (r Record, n int, err error) {
	end, err := frameEnd(b)
	if err != nil {
		return Record{}, 0, err
	}
	if b[8] == 0 {
		return Record{}, 0, errZeroType
	}
	r = Record{
		Type:  b[8],
		Index: binary.LittleEndian.Uint64(b[9:]),
		Data:  b[recordHeaderBytes:end:end],
	}
	return r, end, nil
}
