package secret_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"chaos/internal/secret"
)

func TestArgsRedactsEveryPasswordSpelling(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want []string
	}{
		{"separate value", []string{"chaos", "run", "--password", "hunter2", "--seed", "7"},
			[]string{"chaos", "run", "--password", "<redacted>", "--seed", "7"}},
		{"joined value", []string{"chaos", "run", "--password=hunter2"},
			[]string{"chaos", "run", "--password=<redacted>"}},
		{"empty joined value", []string{"chaos", "run", "--password="},
			[]string{"chaos", "run", "--password=<redacted>"}},
		{"value that looks like a flag", []string{"chaos", "--password", "--seed", "7"},
			[]string{"chaos", "--password", "<redacted>", "7"}},
		{"flag at the end, no value", []string{"chaos", "run", "--password"},
			[]string{"chaos", "run", "--password"}},
		{"given twice", []string{"--password", "a", "--password=b"},
			[]string{"--password", "<redacted>", "--password=<redacted>"}},
		{"password file path kept", []string{"chaos", "run", "--password-file", "/etc/pw", "--password-file=/x"},
			[]string{"chaos", "run", "--password-file", "/etc/pw", "--password-file=/x"}},
		{"other flags kept", []string{"chaos", "run", "--name", "password", "---password", "x", "-password"},
			[]string{"chaos", "run", "--name", "password", "---password", "x", "-password"}},
		{"none", nil, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]string(nil), c.in...)
			got := secret.Args(in)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.in, in, "Args changed its argument")
			assert.Equal(t, got, secret.Args(got), "Args is not idempotent")
		})
	}
}

func TestLineRedactsShellQuotedPasswords(t *testing.T) {
	cases := []struct{ in, want string }{
		{"chaos run --password hunter2 --seed 7", "chaos run --password '<redacted>' --seed 7"},
		{"chaos run --password 'hunter 2' --seed 7", "chaos run --password '<redacted>' --seed 7"},
		{`chaos run --password 'it'\''s' --seed 7`, "chaos run --password '<redacted>' --seed 7"},
		{`chaos run --password "a \"b\" c" --seed 7`, "chaos run --password '<redacted>' --seed 7"},
		{`chaos run --password a\ b --seed 7`, "chaos run --password '<redacted>' --seed 7"},
		{"chaos run --password=hunter2", "chaos run '--password=<redacted>'"},
		{"chaos run '--password=hunter 2' --seed 7", "chaos run '--password=<redacted>' --seed 7"},
		{"chaos run --pass'word' x", "chaos run --pass'word' '<redacted>'"},
		{"chaos run --password 'unterminated", "chaos run --password '<redacted>'"},
		{"chaos run --password", "chaos run --password"},
		{"chaos run --password-file /etc/pw --name 'a b'", "chaos run --password-file /etc/pw --name 'a b'"},
		{"", ""},
	}
	for _, c := range cases {
		got := secret.Line(c.in)
		assert.Equal(t, c.want, got, "Line(%q)", c.in)
		assert.Equal(t, got, secret.Line(got), "Line is not idempotent on %q", c.in)
	}
}

func TestEnvironDropsTheSecretVariables(t *testing.T) {
	env := []string{"HOME=/root", "CHAOS_SSH_PASSWORD=hunter2", "PATH=/bin", "CHAOS_SSH_PASSWORD_HINT=x"}
	assert.Equal(t, []string{"HOME=/root", "PATH=/bin", "CHAOS_SSH_PASSWORD_HINT=x"}, secret.Environ(env))
	assert.True(t, secret.IsEnv(secret.PasswordEnv))
	assert.True(t, secret.IsFlag(secret.PasswordFlag))
	assert.False(t, secret.IsFlag(secret.PasswordFileFlag), "a password file's path is not secret")
}
