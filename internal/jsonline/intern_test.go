package jsonline

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

func TestInterner(t *testing.T) {
	in := NewInterner(2)
	a := in.Bytes([]byte("n1"))
	assert.Same(t, unsafe.StringData(a), unsafe.StringData(in.Bytes([]byte("n1"))), "equal strings are shared")
	in.String(strings.Repeat("x", 65)) // too long: not kept
	in.String("n2")
	c := in.String("n3") // over the bound: not kept
	assert.NotSame(t, unsafe.StringData(c), unsafe.StringData(in.Bytes([]byte("n3"))))
	var zero Interner
	assert.Equal(t, "n1", zero.Bytes([]byte("n1")), "the zero Interner returns, shares nothing")
}
