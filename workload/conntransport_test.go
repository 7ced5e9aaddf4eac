package workload

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingServer is an HTTP server that counts the connections it accepted
// and the requests it received; handler answers them.
type countingServer struct {
	*httptest.Server
	conns, requests atomic.Int64
}

func newCountingServer(t *testing.T, handler http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		handler(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_, _ = w.Write(append([]byte(r.Method+" "), body...))
}

// send sends a request through c and returns the body it answered.
func send(ctx context.Context, c *http.Client, method, url, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestConnTransportKeepsOneConnectionAlive(t *testing.T) {
	s := newCountingServer(t, echo)
	c := &http.Client{Transport: &ConnTransport{}}
	for i := range 20 {
		got, err := send(t.Context(), c, http.MethodPut, s.URL+"/k", "v"+string(rune('a'+i)))
		require.NoError(t, err)
		assert.Equal(t, "PUT v"+string(rune('a'+i)), got)
	}
	assert.EqualValues(t, 1, s.conns.Load(), "20 requests in a row share a connection")
}

// A connection the server closed while it was idle is replaced before the
// request is written: the request is sent once and succeeds.
func TestConnTransportReplacesAConnectionClosedWhileIdle(t *testing.T) {
	s := newCountingServer(t, echo)
	tr := &ConnTransport{}
	c := &http.Client{Transport: tr}
	_, err := send(t.Context(), c, http.MethodPut, s.URL, "1")
	require.NoError(t, err)
	s.CloseClientConnections()
	require.Eventually(t, func() bool { // the FIN reaches the client's socket
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.idle) == 1 && !idleAlive(tr.idle[0])
	}, 5*time.Second, time.Millisecond)

	got, err := send(t.Context(), c, http.MethodPut, s.URL, "2")
	require.NoError(t, err)
	assert.Equal(t, "PUT 2", got)
	assert.EqualValues(t, 2, s.requests.Load(), "each request reached the server once")
	assert.EqualValues(t, 2, s.conns.Load())
}

// The request's deadline interrupts a server that does not answer; the
// error is the context's, and the next request gets a new connection.
func TestConnTransportDeadlineAndCancel(t *testing.T) {
	release := make(chan struct{})
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		echo(w, r)
	})
	defer close(release)
	c := &http.Client{Transport: &ConnTransport{}}

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := send(ctx, c, http.MethodPut, s.URL+"/hang", "x")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = send(ctx, c, http.MethodGet, s.URL+"/hang", "")
	require.ErrorIs(t, err, context.Canceled)

	got, err := send(t.Context(), c, http.MethodGet, s.URL+"/ok", "")
	require.NoError(t, err)
	assert.Equal(t, "GET ", got)
	assert.EqualValues(t, 3, s.conns.Load(), "an interrupted exchange's connection is not reused")
}

func TestConnTransportDialFailureIsNotSent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	c := &http.Client{Transport: &ConnTransport{}}
	_, err = send(t.Context(), c, http.MethodPut, "http://"+addr+"/k", "v")
	require.Error(t, err)
	assert.True(t, dialFailed(err), "%v is a dial error", err)
}

// Requests in flight at once get a connection each; MaxIdle of them stay.
func TestConnTransportConcurrentRequests(t *testing.T) {
	s := newCountingServer(t, echo)
	tr := &ConnTransport{MaxIdle: 4}
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				got, err := send(t.Context(), c, http.MethodPost, s.URL, "b")
				assert.NoError(t, err)
				assert.Equal(t, "POST b", got)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 160, s.requests.Load())
	tr.mu.Lock()
	assert.LessOrEqual(t, len(tr.idle), 4)
	tr.mu.Unlock()
	tr.CloseIdleConnections()
	assert.Empty(t, tr.idle)
}

// A body not read to its end, or a server that says Connection: close,
// ends the connection.
func TestConnTransportClosesWhatCannotGoOn(t *testing.T) {
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
	})
	c := &http.Client{Transport: &ConnTransport{}}
	resp, err := c.Get(s.URL + "/partial")
	require.NoError(t, err)
	_, err = resp.Body.Read(make([]byte, 10))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	_, err = send(t.Context(), c, http.MethodGet, s.URL+"/close", "")
	require.NoError(t, err)
	_, err = send(t.Context(), c, http.MethodGet, s.URL+"/", "")
	require.NoError(t, err)
	assert.EqualValues(t, 3, s.conns.Load())
}

func TestConnTransportRefusesOtherSchemes(t *testing.T) {
	c := &http.Client{Transport: &ConnTransport{}}
	_, err := send(t.Context(), c, http.MethodGet, "ftp://127.0.0.1:1/", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unsupported scheme "ftp"`)
	var opErr *net.OpError
	assert.False(t, errors.As(err, &opErr))
}

func TestConnTransportSpeaksHTTPS(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(echo))
	defer s.Close()
	tr := &ConnTransport{TLS: s.Client().Transport.(*http.Transport).TLSClientConfig}
	got, err := send(t.Context(), &http.Client{Transport: tr}, http.MethodPut, s.URL, "v")
	require.NoError(t, err)
	assert.Equal(t, "PUT v", got)
	tr.CloseIdleConnections()
}

// A request whose context has ended is not sent.
func TestConnTransportSendsNothingForAnEndedContext(t *testing.T) {
	s := newCountingServer(t, echo)
	c := &http.Client{Transport: &ConnTransport{}}
	_, err := send(t.Context(), c, http.MethodPut, s.URL, "1")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = send(ctx, c, http.MethodPut, s.URL, "2")
	require.ErrorIs(t, err, context.Canceled)
	assert.EqualValues(t, 1, s.requests.Load())
}
