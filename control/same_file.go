package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// FileSHA256 is the hex SHA-256 of the local file at p.
func FileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// EnsureFile makes the file at remote on r's host the local file whose
// SHA-256 is sum (FileSHA256 of local): it creates remote's directory, and
// uploads local with mode unless the host's sha256sum of remote is sum
// already. It reports whether it uploaded.
func EnsureFile(ctx context.Context, r Remote, local, remote, sum string, mode os.FileMode) (bool, error) {
	out, err := Output(ctx, r, fmt.Sprintf("mkdir -p %s && { sha256sum %s 2>/dev/null || true; }",
		ShellQuote(path.Dir(remote)), ShellQuote(remote)))
	if err != nil {
		return false, err
	}
	if f := strings.Fields(string(out)); len(f) > 0 && f[0] == sum {
		return false, nil
	}
	if err := r.Upload(ctx, local, remote, mode); err != nil {
		return false, fmt.Errorf("upload %s: %w", path.Base(local), err)
	}
	return true, nil
}
