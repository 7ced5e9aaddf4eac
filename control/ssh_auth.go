package control

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// credentials are what a dialer offers to log in: key files loaded once,
// the agent (asked at each login) and a password.
type credentials struct {
	keyFiles  []string // the files behind signers, for messages
	signers   []ssh.Signer
	agentSock string // "" for no agent
	password  string
}

// loadCredentials reads the key files of cfg (see SSHConfig.KeyFiles). It
// fails when no way to log in is left.
func loadCredentials(cfg SSHConfig, home string) (*credentials, error) {
	c := &credentials{password: cfg.Password}
	if cfg.Agent {
		c.agentSock = os.Getenv("SSH_AUTH_SOCK")
	}
	files, explicit := cfg.KeyFiles, cfg.KeyFiles != nil
	if !explicit {
		files = defaultKeyFiles(home)
	}
	for _, f := range files {
		s, err := loadSigner(f)
		if err != nil && explicit {
			return nil, err
		}
		if err == nil {
			c.signers = append(c.signers, s)
			c.keyFiles = append(c.keyFiles, f)
			warnOpenKeyFile(cfg.Warn, f)
		}
	}
	if len(c.signers) == 0 && c.agentSock == "" && c.password == "" {
		return nil, fmt.Errorf("ssh: nothing to log in with: no key file (%s), no SSH agent, no password: pass --ssh-private-key, or --password-file or $CHAOS_SSH_PASSWORD", strings.Join(files, ", "))
	}
	return c, nil
}

// loadSigner reads one private key file.
func loadSigner(path string) (ssh.Signer, error) {
	pem, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ssh: key file %s does not exist", path)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh: key file: %w", err)
	}
	s, err := ssh.ParsePrivateKey(pem)
	var encrypted *ssh.PassphraseMissingError
	if errors.As(err, &encrypted) {
		return nil, fmt.Errorf("ssh: key file %s has a passphrase: add it to the SSH agent (ssh-add %s)", path, ShellQuote(path))
	}
	if err != nil {
		return nil, fmt.Errorf("ssh: key file %s: %w", path, err)
	}
	return s, nil
}

// warnOpenKeyFile writes a line to w when the private key file at path can
// be read by its group or others, which OpenSSH refuses ("UNPROTECTED
// PRIVATE KEY FILE"). chaos still uses the key: the line says how to fix
// the file. A nil w gets no line.
func warnOpenKeyFile(w io.Writer, path string) {
	st, err := os.Stat(path)
	if w == nil || err != nil || st.Mode().Perm()&0o077 == 0 {
		return
	}
	fmt.Fprintf(w, "chaos: warning: private key %s has mode %04o, open to group or others, which OpenSSH refuses; fix it with chmod 600 %s\n",
		path, st.Mode().Perm(), ShellQuote(path))
}

// methods are the auth methods for one login, in the order they are tried
// (key files, agent keys, password), with a description of what is offered
// for errors. done closes the agent connection once the login is over.
// The password goes out only when gate, asked at that moment, says nil;
// its error otherwise ends the login with nothing sent.
func (c *credentials) methods(gate func() error) (methods []ssh.AuthMethod, offered string, done func()) {
	signers := c.signers
	var what []string
	if len(c.keyFiles) > 0 {
		what = append(what, "keys "+strings.Join(c.keyFiles, ", "))
	}
	done = func() {}
	if c.agentSock != "" {
		agentSigners, closeAgent, err := agentSigners(c.agentSock)
		if err != nil {
			what = append(what, "no agent keys ("+err.Error()+")")
		} else {
			signers = append(signers[:len(signers):len(signers)], agentSigners...)
			what = append(what, fmt.Sprintf("%d agent keys", len(agentSigners)))
			done = closeAgent
		}
	}
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	if c.password != "" {
		password := func() (string, error) {
			if err := gate(); err != nil {
				return "", err
			}
			return c.password, nil
		}
		answer := func(name, instruction string, questions []string, echos []bool) ([]string, error) {
			if err := gate(); err != nil {
				return nil, err
			}
			return c.answerPrompts(name, instruction, questions, echos)
		}
		methods = append(methods, ssh.PasswordCallback(password), ssh.KeyboardInteractive(answer))
		what = append(what, "password")
	}
	return methods, strings.Join(what, "; "), done
}

// answerPrompts answers every keyboard-interactive question with the
// password, which is what servers that do passwords this way ask.
func (c *credentials) answerPrompts(_, _ string, questions []string, _ []bool) ([]string, error) {
	answers := make([]string, len(questions))
	for i := range answers {
		answers[i] = c.password
	}
	return answers, nil
}

// agentSigners connects to the agent at sock and lists its keys; the
// connection must stay open while they sign.
func agentSigners(sock string) ([]ssh.Signer, func(), error) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nil, fmt.Errorf("agent: %w", err)
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("agent: %w", err)
	}
	return signers, func() { conn.Close() }, nil
}

// authError is the one-line error of a login the server refused.
func authError(host, user, offered string) error {
	if offered == "" {
		offered = "nothing"
	}
	return fmt.Errorf("%s: ssh: authentication failed for user %s (tried %s): check --username, --ssh-private-key and the password (--password-file or $CHAOS_SSH_PASSWORD)", host, user, offered)
}
