package control

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control/sshtest"
)

// Under PasswordToVerifiedOnly the password reaches a host only when its
// key is in known_hosts, whatever the host asks and whether or not host
// keys are checked; without it, an unchecked host gets it (the choice
// --strict-host-key-checking=false makes for chaos run).
func TestPasswordOnlyToVerifiedHosts(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name            string
		known, insecure bool
		verifiedOnly    bool
		wantErr         string
		wantOffered     []string
	}{
		{name: "checked, unknown host", wantErr: "host key not in"},
		{name: "unchecked, unknown host", insecure: true, verifiedOnly: true, wantErr: "host key not verified against"},
		{name: "checked, verified host", known: true, verifiedOnly: true, wantOffered: []string{"password pw"}},
		{name: "unchecked, verified host", known: true, insecure: true, verifiedOnly: true, wantOffered: []string{"password pw"}},
		{name: "unchecked, unknown host, no such rule", insecure: true, wantOffered: []string{"password pw"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := sshtest.Start(t, "pw")
			knownHosts := filepath.Join(dir, "known_hosts"+string(rune('a'+i)))
			line := ""
			if c.known {
				line = srv.KnownHostsLine() + "\n"
			}
			require.NoError(t, os.WriteFile(knownHosts, []byte(line), 0o600))
			cfg := SSHConfig{Password: "pw", KeyFiles: []string{}, KnownHosts: knownHosts,
				InsecureIgnoreHostKey: c.insecure, PasswordToVerifiedOnly: c.verifiedOnly, KeepAlive: -1}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := DialSSH(ctx, srv.Addr, cfg)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				assert.Contains(t, err.Error(), srv.Addr, "the error names the host")
				assert.Empty(t, srv.Offered(), "the host was sent a credential")
				return
			}
			require.NoError(t, err)
			r.Close()
			assert.Equal(t, c.wantOffered, srv.Offered())
		})
	}
}

// A host that asks for a keyboard-interactive answer ("Verification
// code:") and whose key is not verified gets no answer either.
func TestNoKeyboardInteractiveAnswerToAnUnverifiedHost(t *testing.T) {
	srv := sshtest.StartInteractive(t)
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	require.NoError(t, os.WriteFile(knownHosts, nil, 0o600))
	d, err := NewSSHDialer(SSHConfig{Password: "pw", KeyFiles: []string{}, KnownHosts: knownHosts,
		InsecureIgnoreHostKey: true, PasswordToVerifiedOnly: true, KeepAlive: -1})
	require.NoError(t, err)
	_, _, _, err = d.connect(context.Background(), srv.Addr, srv.Addr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "host key not verified against "+knownHosts)
	assert.Empty(t, srv.Offered())

	// The same server with the rule off is answered: the test can fail.
	d.cfg.PasswordToVerifiedOnly = false
	_, _, _, err = d.connect(context.Background(), srv.Addr, srv.Addr)
	require.Error(t, err)
	assert.Equal(t, []string{"keyboard-interactive pw"}, srv.Offered())
}

// sudo gets the password only on a Remote whose host was verified, under
// PasswordToVerifiedOnly; always without it.
func TestSudoPasswordOnlyToVerifiedHosts(t *testing.T) {
	for _, c := range []struct {
		verifiedOnly, verified bool
		want                   string
	}{
		{false, false, "pw"}, {false, true, "pw"}, {true, false, ""}, {true, true, "pw"},
	} {
		r := &sshRemote{d: &SSHDialer{cfg: SSHConfig{Password: "pw", PasswordToVerifiedOnly: c.verifiedOnly}}, verified: c.verified}
		assert.Equal(t, c.want, r.sudoPassword(), "verified-only %v, verified %v", c.verifiedOnly, c.verified)
	}
}
