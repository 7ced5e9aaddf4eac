package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"chaos/internal/secret"
)

// maxPasswordBytes bounds the first line of --password-file: a password,
// not a file to slurp.
const maxPasswordBytes = 4096

// sshPassword is the SSH and sudo password: the first line of
// --password-file, else --password, else $CHAOS_SSH_PASSWORD; "" for none.
// A flag wins over the environment; --password and --password-file
// together are refused. Errors are usage errors and never hold the
// password.
func (h hostFlags) sshPassword() (string, error) {
	switch {
	case h.passwordFile != "" && h.password != "":
		return "", usageErrorf("give --%s or --%s, not both", secret.PasswordFileFlag, secret.PasswordFlag)
	case h.passwordFile != "":
		return readPasswordFile(h.passwordFile)
	case h.password != "":
		return h.password, nil
	}
	return os.Getenv(secret.PasswordEnv), nil
}

// readPasswordFile returns the first line of the file at path, without its
// line ending. A file that cannot be read, or whose first line is empty or
// longer than maxPasswordBytes, is a usage error.
func readPasswordFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", usageErrorf("--%s: %v", secret.PasswordFileFlag, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, maxPasswordBytes+2), maxPasswordBytes+2)
	line, err := r.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", usageErrorf("--%s %s: %v", secret.PasswordFileFlag, path, err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	switch {
	case len(line) > maxPasswordBytes:
		return "", usageErrorf("--%s %s: the first line is longer than %d bytes; write the password alone on it", secret.PasswordFileFlag, path, maxPasswordBytes)
	case line == "":
		return "", usageErrorf("--%s %s: the first line is empty; write the password on it", secret.PasswordFileFlag, path)
	}
	return line, nil
}

// warnPasswordFlag prints one line on stderr when cmd was given --password
// on its command line, where other users can read it.
func warnPasswordFlag(cmd *cobra.Command) {
	if fl := cmd.Flags().Lookup(secret.PasswordFlag); fl != nil && fl.Changed {
		fmt.Fprintf(cmd.ErrOrStderr(), "chaos: warning: --%s is visible to other users (ps, shell history); use --%s FILE or $%s instead\n",
			secret.PasswordFlag, secret.PasswordFileFlag, secret.PasswordEnv)
	}
}
