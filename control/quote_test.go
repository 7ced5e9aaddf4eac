package control

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShellQuoteForms(t *testing.T) {
	for in, want := range map[string]string{
		"":               "''",
		"plain":          "plain",
		"/var/lib/n1.db": "/var/lib/n1.db",
		"a=b,c:d@e%f+g":  "a=b,c:d@e%f+g",
		"two words":      "'two words'",
		"it's":           `'it'\''s'`,
		"'":              `''\'''`,
		"~root":          "'~root'",
		"$HOME":          "'$HOME'",
	} {
		require.Equal(t, want, ShellQuote(in), "ShellQuote(%q)", in)
	}
}

// nastyStrings are words a shell would mangle if they were not quoted.
func nastyStrings() []string {
	return []string{
		"", " ", "  two  spaces ", "tab\there", "new\nline", "trailing\n",
		"'", "''", `"`, `\`, `\\'`, `'\''`, "it's \"quoted\"",
		"$HOME", "${PATH}", "$(id -u)", "`id -u`", "$((1+1))",
		"*", "?", "[a-z]", "{a,b}", "~", "~root", "!", "!!", "#comment",
		"a;b", "a&b", "a|b", "a>b", "a<b", "(sub)", "-n", "--", "-e \\n",
		"unicode: héllo wörld ✓", "\x01\x7f", "%s%d",
	}
}

// TestShellQuoteRoundTripsThroughSh: sh gets back exactly the string.
func TestShellQuoteRoundTripsThroughSh(t *testing.T) {
	for _, s := range nastyStrings() {
		out, err := exec.Command("sh", "-c", "printf '%s' "+ShellQuote(s)).Output()
		require.NoError(t, err, "%q", s)
		require.Equal(t, s, string(out), "round trip of %q", s)
	}
}

// TestShellQuoteNestsInSudoShC: a quoted word survives two levels of sh,
// as commands do under wrapCommand.
func TestShellQuoteNestsInSudoShC(t *testing.T) {
	for _, s := range nastyStrings() {
		line := wrapCommand(asRoot, "printf '%s' "+ShellQuote(s))
		out, err := exec.Command("sh", "-c", line).Output()
		require.NoError(t, err, "%q", s)
		require.Equal(t, s, string(out), "round trip of %q through %s", s, line)
	}
}
