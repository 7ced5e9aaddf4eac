package control

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHostAddr(t *testing.T) {
	for host, want := range map[string]string{
		"n3":               "n3:22",
		"n3:2200":          "n3:2200",
		"10.0.0.3":         "10.0.0.3:22",
		"[fd00::3]:2200":   "[fd00::3]:2200",
		"fd00::3":          "[fd00::3]:22",
		"[fd00::3]":        "[fd00::3]:22",
		"host.example.org": "host.example.org:22",
	} {
		require.Equal(t, want, HostAddr(host, 22), host)
	}
	require.Equal(t, "n3:2222", HostAddr("n3", 2222))
}

func TestSSHConfigDefaults(t *testing.T) {
	c := SSHConfig{}.withDefaults("/home/me")
	require.Equal(t, "root", c.User)
	require.Equal(t, 22, c.Port)
	require.Equal(t, "/home/me/.ssh/known_hosts", c.KnownHosts)
	require.Equal(t, 8, c.MaxSessions)
	require.Equal(t, 10*time.Second, c.DialTimeout)
	require.Equal(t, 15*time.Second, c.KeepAlive)
	require.Equal(t, DefaultBackoff(), c.Backoff)
	require.NotNil(t, c.Log)
	require.False(t, c.InsecureIgnoreHostKey, "host keys are checked unless asked not to")

	kept := SSHConfig{User: "admin", Port: 2222, KnownHosts: "/kh", MaxSessions: 2, KeepAlive: -1}.withDefaults("/home/me")
	require.Equal(t, "admin", kept.User)
	require.Equal(t, 2222, kept.Port)
	require.Equal(t, "/kh", kept.KnownHosts)
	require.Equal(t, 2, kept.MaxSessions)
	require.Equal(t, time.Duration(-1), kept.KeepAlive)
}
