package control

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// privilege is how commands on a host get root, found once per host when it
// is dialed (probePrivilege).
type privilege int

const (
	// asRoot: the login user is root; commands run with sh -c.
	asRoot privilege = iota
	// sudoNoPassword: sudo -n works without a password (NOPASSWD).
	sudoNoPassword
	// sudoPassword: sudo needs the password, which goes first on stdin.
	sudoPassword
)

// wrapCommand is the command line that runs cmd with sh -c under p. The
// remote login shell parses the line, so sh -c makes cmd's syntax POSIX sh
// whatever that shell is.
//
// With a password, sudo reads it from stdin (-S) with an empty prompt (-p)
// and ignores cached credentials (-k): sudo then always consumes exactly the
// password line, and the rest of stdin belongs to cmd. Without -k, a cached
// credential would leave the password line in cmd's stdin.
func wrapCommand(p privilege, cmd string) string {
	inner := "sh -c " + ShellQuote(cmd)
	switch p {
	case sudoNoPassword:
		return "sudo -n -- " + inner
	case sudoPassword:
		return "sudo -S -k -p '' -- " + inner
	}
	return inner
}

// commandStdin is the stdin for a command wrapped under p: the password line
// first when sudo reads it, then in (nil for no input).
func commandStdin(p privilege, password string, in io.Reader) io.Reader {
	if p != sudoPassword {
		return in
	}
	pw := strings.NewReader(password + "\n")
	if in == nil {
		return pw
	}
	return io.MultiReader(pw, in)
}

// sudoError recognizes a command that sudo (or the shell looking for sudo)
// refused to run, and says so in one line naming host and user; nil when res
// is not such a refusal. sudo exits 1 when it refuses; a shell exits 127 when
// it finds no sudo.
func sudoError(host, user string, res Result) error {
	stderr := string(res.Stderr)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(stderr, s) {
				return true
			}
		}
		return false
	}
	switch {
	case res.ExitCode == 127 && has("sudo: not found", "sudo: command not found"):
		return fmt.Errorf("%s: sudo is not installed and user %s is not root: install sudo or use --username root", host, user)
	case res.ExitCode != 1:
		return nil
	case has("incorrect password attempt"):
		return fmt.Errorf("%s: sudo rejected the password of user %s: check --password-file or $CHAOS_SSH_PASSWORD", host, user)
	case has("is not in the sudoers file", "is not allowed to execute", "may not run sudo"):
		return fmt.Errorf("%s: user %s may not use sudo: add it to sudoers or use --username root", host, user)
	case has("sudo: a password is required", "sudo: a terminal is required"):
		return fmt.Errorf("%s: sudo needs the password of user %s: pass --password-file or set $CHAOS_SSH_PASSWORD, or allow NOPASSWD in sudoers", host, user)
	}
	return nil
}

// probePrivilege finds how commands get root on the host: the user is root,
// or sudo works without a password, or with the configured one. Failing
// that, it says why in one line.
func (r *sshRemote) probePrivilege(ctx context.Context) error {
	res, err := r.exec(ctx, command{what: "`id -u`", line: "id -u"})
	if err != nil {
		return err
	}
	if err := res.Err(r.host, "id -u"); err != nil {
		return err
	}
	if strings.TrimSpace(string(res.Stdout)) == "0" {
		r.priv = asRoot
		return nil
	}
	res, err = r.exec(ctx, command{what: "`sudo -n true`", line: "sudo -n true"})
	if err != nil {
		return err
	}
	if res.ExitCode == 0 {
		r.priv = sudoNoPassword
		return nil
	}
	if r.sudoPassword() != "" && strings.Contains(string(res.Stderr), "a password is required") {
		r.priv = sudoPassword
		res, err = r.Run(ctx, "true")
		if err != nil || res.ExitCode == 0 {
			return err
		}
	}
	if r.sudoPassword() == "" && r.d.cfg.Password != "" && strings.Contains(string(res.Stderr), "a password is required") {
		return fmt.Errorf("%s: sudo needs the password of user %s, and the password is sent only to a host whose key is in %s: add the host's key there, or allow NOPASSWD in sudoers",
			r.host, r.d.cfg.User, r.d.cfg.KnownHosts)
	}
	if err := sudoError(r.host, r.d.cfg.User, res); err != nil {
		return err
	}
	return res.Err(r.host, "sudo -n true")
}
