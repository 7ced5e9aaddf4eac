package node

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"chaos/internal/atomicfile"
	"chaos/node/snap"
	"chaos/node/wal"
	"chaos/raft"
)

// WAL record types. Hard state and snapshot markers are rewritten at the
// head of every segment, so old segments can be deleted after a snapshot.
const (
	recEntry     uint8 = 1 // Index: the entry's index; Data: term, type, command
	recHardState uint8 = 2 // Data: term, vote, commit
	recSnapshot  uint8 = 3 // Index: snapshot index; Data: its term
)

// storage is the node's durable state: the WAL and the snapshot files. It
// is used by the event loop goroutine only (and by the lazy-fsync bug's
// timer, through the WAL's own locking).
type storage struct {
	wal   *wal.WAL
	snaps *snap.Snapshotter
	opts  storageOptions
	lazy  lazySync // the lazy-fsync bug's timer
}

// storageOptions configure openStorage. The zero value is a correct node's
// storage with the real fsyncs.
type storageOptions struct {
	// bugs: lazyFsync, noDirSync and trustCorrupt are the storage's.
	bugs bugSet
	// syncer replaces fsync(2) for the WAL and the snapshots (tests).
	syncer wal.Syncer
	// lazySyncEvery is the lazy-fsync bug's timer; 0 runs none (a test
	// calls wal.Sync itself).
	lazySyncEvery time.Duration
	// lazyTicks, when not nil, drives the lazy-fsync bug's timer instead
	// of a ticker of lazySyncEvery (tests).
	lazyTicks <-chan time.Time
	// segmentBytes is the WAL's segment size; 0 is its default.
	segmentBytes int64
	logger       *slog.Logger
}

// openStorage opens (creating) the WAL in dataDir/wal and the snapshots
// in dataDir/snap, then fsyncs dataDir, so that the two directories'
// names are durable before anything in them is acknowledged.
func openStorage(dataDir string, opts storageOptions) (*storage, error) {
	if opts.logger == nil {
		opts.logger = slog.New(slog.DiscardHandler)
	}
	b := opts.bugs
	w, err := wal.Open(filepath.Join(dataDir, "wal"), wal.Options{HeaderTypes: []uint8{recHardState, recSnapshot},
		SegmentBytes: opts.segmentBytes, Syncer: opts.syncer,
		Bugs: wal.Bugs{LazySync: b.lazyFsync, NoDirSync: b.noDirSync, TrustCorrupt: b.trustCorrupt}})
	if err != nil {
		return nil, err
	}
	snapOpts := []snap.Option{snap.WithLogger(opts.logger)}
	if opts.syncer != nil {
		snapOpts = append(snapOpts, snap.WithSyncer(opts.syncer))
	}
	if b.noDirSync {
		snapOpts = append(snapOpts, snap.WithNoDirSync())
	}
	s, err := snap.New(filepath.Join(dataDir, "snap"), snapOpts...)
	if err == nil && !b.noDirSync {
		err = syncDataDir(dataDir, opts.syncer)
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return &storage{wal: w, snaps: s, opts: opts}, nil
}

// syncDataDir fsyncs dataDir (through y when not nil).
func syncDataDir(dataDir string, y wal.Syncer) error {
	if y != nil {
		return y.SyncDir(dataDir)
	}
	return atomicfile.SyncDir(dataDir)
}

// recover reads the newest snapshot and replays the WAL into the state the
// raft core restarts from. Later entry records replace earlier ones at the
// same or higher indexes, exactly as Ready's truncation rule demands. The
// snapshot's ConfState is left empty: it is in the snapshot's data
// (snapshotImage), which the node decodes.
func (s *storage) recover() (raft.State, wal.RecoveryInfo, error) {
	var st raft.State
	term, index, data, err := s.snaps.Load()
	switch {
	case errors.Is(err, snap.ErrNoSnapshot):
	case err != nil:
		return st, wal.RecoveryInfo{}, err
	default:
		st.Snapshot = &raft.Snapshot{Meta: raft.SnapshotMeta{Index: index, Term: term}, Data: data}
	}
	recs, info, err := s.wal.ReadAll()
	if err != nil {
		return st, info, err
	}
	if s.opts.bugs.lazyFsync {
		s.lazy.start(s.wal, s.opts)
	}
	for _, r := range recs {
		switch r.Type {
		case recHardState:
			if st.HardState, err = decodeHardState(r.Data); err != nil {
				return st, info, err
			}
		case recEntry:
			e, err := decodeEntry(r.Index, r.Data)
			if err != nil {
				return st, info, err
			}
			if n := len(st.Entries); s.opts.bugs.trustCorrupt && n > 0 && e.Index > st.Entries[n-1].Index+1 {
				// The planted bug trusts a damaged record's place in the
				// log over its index field, as a node that numbers its
				// entries by position would: no gap, no refusal.
				e.Index = st.Entries[n-1].Index + 1
			}
			if n := len(st.Entries); n > 0 && e.Index <= st.Entries[n-1].Index {
				st.Entries = truncateAt(st.Entries, e.Index)
			}
			st.Entries = append(st.Entries, e)
		}
	}
	if st.Snapshot != nil {
		st.Entries = dropThrough(st.Entries, st.Snapshot.Meta.Index)
	}
	// The commit index may be ahead of the entries a torn write left (a
	// Ready's hard state is written before its entries): it is only a hint.
	var last uint64
	if st.Snapshot != nil {
		last = st.Snapshot.Meta.Index
	}
	if n := len(st.Entries); n > 0 {
		last = st.Entries[n-1].Index
	}
	st.HardState.Commit = min(st.HardState.Commit, last)
	return st, info, nil
}

func truncateAt(ents []raft.Entry, index uint64) []raft.Entry {
	for i, e := range ents {
		if e.Index >= index {
			return ents[:i]
		}
	}
	return ents
}

func dropThrough(ents []raft.Entry, index uint64) []raft.Entry {
	for i, e := range ents {
		if e.Index > index {
			return ents[i:]
		}
	}
	return nil
}

// save writes a Ready's hard state and entries with one group commit, and
// waits for them to be durable when sync (raft.Ready.MustSync).
func (s *storage) save(hs raft.HardState, ents []raft.Entry, sync bool) error {
	recs := make([]wal.Record, 0, len(ents)+1)
	if !hs.IsEmpty() {
		recs = append(recs, wal.Record{Type: recHardState, Data: encodeHardState(hs)})
	}
	for _, e := range ents {
		recs = append(recs, wal.Record{Type: recEntry, Index: e.Index, Data: encodeEntry(e)})
	}
	switch {
	case len(recs) == 0:
		return nil
	case sync:
		return s.wal.Save(recs...)
	default:
		return s.wal.Write(recs...)
	}
}

// saveSnapshot makes a snapshot durable, then records it in the WAL, then
// lets the WAL drop segments it covers: the order the raft package's
// persistence contract requires.
func (s *storage) saveSnapshot(sn raft.Snapshot) error {
	if err := s.snaps.Save(sn.Meta.Term, sn.Meta.Index, sn.Data); err != nil {
		return err
	}
	marker := wal.Record{Type: recSnapshot, Index: sn.Meta.Index, Data: binary.AppendUvarint(nil, sn.Meta.Term)}
	if err := s.wal.Save(marker); err != nil {
		return err
	}
	return s.wal.Compact(sn.Meta.Index)
}

// caughtUp forgets, durably, a loss of durable records recovery reported
// (wal.RecoveryInfo.Lost): its owner was caught up since.
func (s *storage) caughtUp() error { return s.wal.CaughtUp() }

// close stops the lazy-fsync timer, if any, and closes the WAL.
func (s *storage) close() error {
	s.lazy.close()
	return s.wal.Close()
}

func encodeHardState(hs raft.HardState) []byte {
	b := binary.AppendUvarint(nil, hs.Term)
	b = binary.AppendUvarint(b, hs.Vote)
	return binary.AppendUvarint(b, hs.Commit)
}

func decodeHardState(b []byte) (raft.HardState, error) {
	var v [3]uint64
	for i := range v {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return raft.HardState{}, fmt.Errorf("wal: hard state record is malformed")
		}
		v[i], b = x, b[n:]
	}
	return raft.HardState{Term: v[0], Vote: v[1], Commit: v[2]}, nil
}

func encodeEntry(e raft.Entry) []byte {
	b := binary.AppendUvarint(make([]byte, 0, len(e.Data)+11), e.Term)
	b = append(b, byte(e.Type))
	return append(b, e.Data...)
}

func decodeEntry(index uint64, b []byte) (raft.Entry, error) {
	term, n := binary.Uvarint(b)
	if n <= 0 || len(b) < n+1 {
		return raft.Entry{}, fmt.Errorf("wal: entry %d record is malformed", index)
	}
	return raft.Entry{Index: index, Term: term, Type: raft.EntryType(b[n]), Data: b[n+1:]}, nil
}
