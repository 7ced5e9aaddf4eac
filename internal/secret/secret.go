// Package secret decides what chaos must never write or show: the SSH and
// sudo password, whether it came from a flag or from the environment. Every
// writer of a command line (test.json's argv, replay commands in
// campaign.json and junit.xml, the command on report.html and on chaos
// serve's pages) passes it through Args or Line, and every process chaos
// starts gets its environment through Environ. It imports nothing of
// chaos's, so any package can use it.
package secret

import "strings"

// Redacted stands for a secret value wherever one would be written.
const Redacted = "<redacted>"

// The password's sources. PasswordFileFlag names a file: the path is not
// secret and is recorded as given.
const (
	PasswordFlag     = "password"
	PasswordFileFlag = "password-file"
	PasswordEnv      = "CHAOS_SSH_PASSWORD"
)

// IsFlag reports whether the long flag name (without dashes) takes a
// secret value.
func IsFlag(name string) bool { return name == PasswordFlag }

// IsEnv reports whether the environment variable name holds a secret.
func IsEnv(name string) bool { return name == PasswordEnv }

// Args returns a copy of argv with the value of every secret flag replaced
// by Redacted: "--password X" becomes "--password <redacted>" and
// "--password=X" becomes "--password=<redacted>". A secret flag with no
// word after it is left as it is. Args is idempotent.
func Args(argv []string) []string {
	out := make([]string, len(argv))
	copy(out, argv)
	for i := 0; i < len(out); i++ {
		name, _, hasValue := flagWord(out[i])
		switch {
		case !IsFlag(name):
		case hasValue:
			out[i] = "--" + name + "=" + Redacted
		case i+1 < len(out):
			out[i+1] = Redacted
			i++
		}
	}
	return out
}

// flagWord splits a word "--name" or "--name=value"; name is "" for a word
// that is not a long flag.
func flagWord(w string) (name, value string, hasValue bool) {
	rest, ok := strings.CutPrefix(w, "--")
	if !ok || rest == "" || strings.HasPrefix(rest, "-") {
		return "", "", false
	}
	return strings.Cut(rest, "=")
}

// Environ returns env (as os.Environ gives it) without the secret
// variables, for the processes chaos starts: they have no use for the
// password and could write it into their logs or output.
func Environ(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !IsEnv(name) {
			out = append(out, kv)
		}
	}
	return out
}
