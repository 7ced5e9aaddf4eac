package faultfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExtentsGapsAndMerges(t *testing.T) {
	var es extents
	assert.Equal(t, [][2]int64{{0, 10}}, es.gaps(0, 10))
	es.add(4, []byte("45"))
	assert.Equal(t, [][2]int64{{0, 4}, {6, 10}}, es.gaps(0, 10))
	assert.Equal(t, [][2]int64(nil), es.gaps(4, 6))
	es.add(6, []byte("6"))
	es.add(0, []byte("01"))
	es.add(2, []byte("23"))
	assert.Equal(t, extents{{0, []byte("0123456")}}, es, "touching runs merge")
	es.add(9, []byte("9"))
	assert.Equal(t, [][2]int64{{7, 9}, {10, 12}}, es.gaps(5, 12))
	assert.Equal(t, int64(8), es.bytes())
}
