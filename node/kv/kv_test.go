package kv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCommandRoundTrip(t *testing.T) {
	for _, c := range []Command{
		{Op: OpPut, Client: 7, Seq: 3, Key: "k1", Value: "v"},
		{Op: OpCAS, Key: "k", Value: "new", From: "old"},
		{Op: OpDelete, Client: 1 << 60, Seq: 1 << 62, Key: ""},
	} {
		b := c.Encode(nil)
		got, err := DecodeCommand(b)
		require.NoError(t, err)
		require.Equal(t, c, got)
		for i := 0; i < len(b); i++ {
			_, err := DecodeCommand(b[:i])
			require.Error(t, err, "truncated at %d", i)
		}
		_, err = DecodeCommand(append(b, 0))
		require.Error(t, err, "trailing byte")
	}
	_, err := DecodeCommand([]byte{9})
	require.ErrorContains(t, err, "unknown op")
}

func TestApplySemantics(t *testing.T) {
	s := NewStore()
	require.Equal(t, Result{Current: "", Found: false}, s.Apply(Command{Op: OpCAS, Key: "k", From: "", Value: "x"}),
		"cas on an absent key fails")
	require.True(t, s.Apply(Command{Op: OpPut, Key: "k", Value: "1"}).OK)
	require.Equal(t, Result{Current: "1", Found: true}, s.Apply(Command{Op: OpCAS, Key: "k", From: "2", Value: "3"}))
	require.True(t, s.Apply(Command{Op: OpCAS, Key: "k", From: "1", Value: "3"}).OK)
	v, ok := s.Get("k")
	require.True(t, ok)
	require.Equal(t, "3", v)
	require.True(t, s.Apply(Command{Op: OpDelete, Key: "k"}).OK)
	_, ok = s.Get("k")
	require.False(t, ok)
}

func TestDuplicateIsAppliedOnce(t *testing.T) {
	s := NewStore()
	first := s.Apply(Command{Op: OpCAS, Client: 1, Seq: 1, Key: "k", From: "a", Value: "b"})
	require.False(t, first.OK)
	s.Apply(Command{Op: OpPut, Client: 2, Seq: 1, Key: "k", Value: "a"})
	// The retry of client 1's cas must return the first result, not apply.
	require.Equal(t, first, s.Apply(Command{Op: OpCAS, Client: 1, Seq: 1, Key: "k", From: "a", Value: "b"}))
	v, _ := s.Get("k")
	require.Equal(t, "a", v)
	require.True(t, s.Apply(Command{Op: OpCAS, Client: 1, Seq: 2, Key: "k", From: "a", Value: "b"}).OK)
}

func TestSnapshotRestore(t *testing.T) {
	s := NewStore()
	s.Apply(Command{Op: OpPut, Client: 5, Seq: 9, Key: "a", Value: "1"})
	b, err := s.Snapshot()
	require.NoError(t, err)
	r := NewStore()
	require.NoError(t, r.Restore(b))
	v, _ := r.Get("a")
	require.Equal(t, "1", v)
	// Sessions survive: the duplicate is still recognised.
	require.True(t, r.Apply(Command{Op: OpPut, Client: 5, Seq: 9, Key: "a", Value: "2"}).OK)
	v, _ = r.Get("a")
	require.Equal(t, "1", v)
	require.Error(t, r.Restore([]byte("{")))
}

func TestHashIsStable(t *testing.T) {
	require.Equal(t, Hash([]byte("x")), Hash([]byte("x")))
	require.NotEqual(t, Hash([]byte("x")), Hash([]byte("y")))
	require.Len(t, Hash(nil), 16)
}
