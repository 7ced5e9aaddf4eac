package nodeapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoutes(t *testing.T) {
	for _, c := range []struct{ route, key, method, path string }{
		{RouteGet, "k1", "GET", "/kv/k1"},
		{RouteCAS, "a/b c", "POST", "/kv/a%2Fb%20c/cas"},
		{RouteDelete, "k1", "DELETE", "/kv/k1"},
		{RouteStatus, "", "GET", "/status"},
		{RouteSetPartition, "", "POST", "/faults/partition"},
		{RouteClearFaults, "", "DELETE", "/faults"},
		{RouteSetAppend, "", "POST", "/faults/append"},
	} {
		assert.Equal(t, c.method, Method(c.route), c.route)
		assert.Equal(t, c.path, Path(c.route, c.key), c.route)
	}
}

func TestAnswerError(t *testing.T) {
	e := answerError(409, []byte(`{"error":"cas mismatch","value":"5"}`), nil)
	assert.Equal(t, "status 409: cas mismatch", e.Error())
	assert.Equal(t, "5", *e.Value)
	assert.NoError(t, e.BodyErr)

	e = answerError(503, []byte(`{"error":"no leader"}`+"\n"), nil)
	assert.Equal(t, "status 503: no leader", e.Error())
	assert.Nil(t, e.Value)

	e = answerError(403, []byte("Forbidden\n"), nil)
	assert.Equal(t, "status 403: Forbidden", e.Error(), "a body that is not JSON is the message")
	assert.Error(t, e.BodyErr)

	e = answerError(500, nil, nil)
	assert.Equal(t, "status 500", e.Error())
}
