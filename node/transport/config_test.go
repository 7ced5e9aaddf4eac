package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

func validConfig() Config {
	return Config{ID: 1, Listen: "127.0.0.1:0", Peers: map[uint64]string{1: "127.0.0.1:1", 2: "127.0.0.1:2"},
		Handler: func([]raft.Message) {}}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"zero id":              func(c *Config) { c.ID = 0 },
		"no listen address":    func(c *Config) { c.Listen = "" },
		"no handler":           func(c *Config) { c.Handler = nil },
		"peer id 0":            func(c *Config) { c.Peers[0] = "127.0.0.1:3" },
		"peer address no port": func(c *Config) { c.Peers[2] = "127.0.0.1" },
		"frame bound too big":  func(c *Config) { c.MaxFrameBytes = MaxFrameBytes + 1 },
		"negative queue":       func(c *Config) { c.QueueLen = -1 },
		"negative timeout":     func(c *Config) { c.WriteTimeout = -time.Second },
		"idle below keepalive": func(c *Config) { c.KeepAlive, c.IdleTimeout = time.Second, 2*time.Second },
		"backoff max below min": func(c *Config) {
			c.BackoffMin, c.BackoffMax = time.Second, time.Millisecond
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := validConfig()
			mutate(&cfg)
			_, err := New(cfg)
			require.Error(t, err)
		})
	}
}

func TestNewIgnoresItselfInPeers(t *testing.T) {
	tr, err := New(validConfig())
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, keys(tr.Stats().Peers))
	require.NoError(t, tr.Close())
}

func keys[V any](m map[uint64]V) []uint64 {
	var out []uint64
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestStartTwiceAndStartAfterCloseFail(t *testing.T) {
	tr, err := New(validConfig())
	require.NoError(t, err)
	require.NoError(t, tr.Start())
	require.NotNil(t, tr.Addr())
	require.Error(t, tr.Start())
	require.NoError(t, tr.Close())
	require.NoError(t, tr.Close(), "Close is idempotent")

	tr, err = New(validConfig())
	require.NoError(t, err)
	require.Nil(t, tr.Addr())
	require.NoError(t, tr.Close())
	require.Error(t, tr.Start())
}

func TestStartReportsListenError(t *testing.T) {
	cfg := validConfig()
	cfg.Listen = "127.0.0.1:not-a-port"
	tr, err := New(cfg)
	require.NoError(t, err)
	require.ErrorContains(t, tr.Start(), "listen on 127.0.0.1:not-a-port")
	require.NoError(t, tr.Close())
}
