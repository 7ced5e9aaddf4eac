package transport

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConnSetLimitsAndClosesEverything(t *testing.T) {
	s := newConnSet(2)
	a1, b1 := net.Pipe()
	a2, _ := net.Pipe()
	a3, _ := net.Pipe()
	require.NoError(t, s.add(a1))
	require.NoError(t, s.add(a2))
	require.ErrorIs(t, s.add(a3), errConnSetFull)

	s.remove(a2)
	require.NoError(t, s.add(a3))
	s.closeAll()
	_, err := b1.Read(make([]byte, 1))
	require.Error(t, err, "closeAll closed the connection")
	a4, _ := net.Pipe()
	require.ErrorIs(t, s.add(a4), errConnSetClosed)
}
