package storeweb_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/storeweb"
)

// A store written before chaos redacted the password (test.json's argv and
// campaign.json's replay commands in clear) shows no password on the pages
// that display a command line: the readers redact.
func TestPagesRedactThePasswordOfOldStores(t *testing.T) {
	const (
		password = "hunter2-in-an-old-store"
		runTime  = "20260110T000000.000Z"
		campTime = "20260111T000000.000Z"
	)
	f := newFixture(t)
	dir := "register-old/" + runTime + "/"
	f.write(t, dir+"test.json", `{"name":"register-old","seed":7,"started":"2026-01-10T00:00:00Z",`+
		`"argv":["chaos","run","--password","`+password+`","--password=`+password+`","--password-file","/etc/pw"]}`)
	f.write(t, dir+"results.json", `{"name":"register-old","seed":7,"valid":true}`)
	replay := `chaos run --password '` + password + `' --seed 7`
	f.write(t, "campaigns/old/"+campTime+"/campaign.json", `{"campaign":"old","shard":"1/1","tests":[{"name":"a",`+
		`"expect":"valid","outcome":"fail","replay":"`+replay+`","runs":[{"seed":7,"verdict":"invalid","replay":"`+replay+`"}]}]}`)
	s, err := storeweb.Open(f.store)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(storeweb.NewHandler(s))
	t.Cleanup(srv.Close)

	code, _, body := get(t, srv, "/runs/register-old/"+runTime+"/")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.NotContains(t, string(body), password)
	assert.Contains(t, string(body), "chaos run --password &lt;redacted&gt; --password=&lt;redacted&gt; --password-file /etc/pw")

	code, _, body = get(t, srv, "/campaigns/old/"+campTime+"/")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.NotContains(t, string(body), password)
	assert.Contains(t, string(body), "chaos run --password &#39;&lt;redacted&gt;&#39; --seed 7")

	_, _, body = get(t, srv, "/")
	assert.NotContains(t, string(body), password)
}
