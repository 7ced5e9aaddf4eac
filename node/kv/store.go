package kv

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Result is the outcome of applying a command.
type Result struct {
	// OK is false only for a cas whose expected value did not match.
	OK bool
	// Current is the value found by a failed cas; Found says whether the key existed.
	Current string
	Found   bool
}

type session struct {
	Seq    uint64
	Result Result
}

// Store is the state machine. Apply is called by one goroutine (the node's
// event loop) in log order; Get may be called concurrently from others.
type Store struct {
	mu       sync.RWMutex
	data     map[string]string
	sessions map[uint64]session
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{data: map[string]string{}, sessions: map[uint64]session{}}
}

// Apply executes c. A duplicate (same client, Seq not above the last
// applied) changes nothing and returns the original result.
func (s *Store) Apply(c Command) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Client != 0 {
		if sess, ok := s.sessions[c.Client]; ok && c.Seq <= sess.Seq {
			return sess.Result
		}
	}
	var r Result
	switch c.Op {
	case OpPut:
		s.data[c.Key] = c.Value
		r.OK = true
	case OpDelete:
		delete(s.data, c.Key)
		r.OK = true
	case OpCAS:
		cur, found := s.data[c.Key]
		if found && cur == c.From {
			s.data[c.Key] = c.Value
			r.OK = true
		} else {
			r.Current, r.Found = cur, found
		}
	}
	if c.Client != 0 {
		s.sessions[c.Client] = session{Seq: c.Seq, Result: r}
	}
	return r
}

// Get returns the value of key.
func (s *Store) Get(key string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.data[key]
	return v, ok
}

// Len returns the number of keys.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.data)
}

type snapshotImage struct {
	Data     map[string]string  `json:"data"`
	Sessions map[uint64]session `json:"sessions"`
}

// Snapshot serializes the whole state, sessions included.
func (s *Store) Snapshot() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return json.Marshal(snapshotImage{Data: s.data, Sessions: s.sessions})
}

// Restore replaces the state with a snapshot's.
func (s *Store) Restore(b []byte) error {
	var img snapshotImage
	if err := json.Unmarshal(b, &img); err != nil {
		return fmt.Errorf("kv: restore snapshot: %w", err)
	}
	if img.Data == nil {
		img.Data = map[string]string{}
	}
	if img.Sessions == nil {
		img.Sessions = map[uint64]session{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data, s.sessions = img.Data, img.Sessions
	return nil
}
