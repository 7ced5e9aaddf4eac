package control

import (
	"context"
	"fmt"
	"os"
	"strings"

	"chaos/internal/atomicfile"
)

// Upload implements Remote: the file streams into `cat` on the session's
// stdin.
func (r *sshRemote) Upload(ctx context.Context, src, dst string, mode os.FileMode) error {
	what := "upload " + src + " to " + dst
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("%s: upload: %w", r.host, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: upload: %w", r.host, err)
	}
	res, err := r.exec(ctx, command{
		what:  what,
		line:  wrapCommand(r.priv, uploadScript(dst, info.Size(), mode)),
		stdin: commandStdin(r.priv, r.sudoPassword(), f),
	})
	if err != nil {
		return err
	}
	return r.transferResult(what, res)
}

// uploadScript writes stdin to dst+".tmp", checks that it got size bytes,
// sets the mode and renames the file onto dst; if any step fails it removes
// the temporary file. The size check matters: the SSH library ends the
// remote stdin normally even when reading the local file failed.
func uploadScript(dst string, size int64, mode os.FileMode) string {
	return fmt.Sprintf(`t=%s; cat > "$t" && n=$(wc -c < "$t") && `+
		`{ [ "$n" -eq %d ] || { echo "received $n of %d bytes" >&2; false; }; } && `+
		`chmod %04o "$t" && mv -f "$t" %s || { rc=$?; rm -f "$t"; exit $rc; }`,
		ShellQuote(dst+".tmp"), size, size, mode.Perm(), ShellQuote(dst))
}

// Download implements Remote: `cat` streams the file into a local temporary
// file, renamed onto dst once the command succeeded.
func (r *sshRemote) Download(ctx context.Context, src, dst string) error {
	what := "download " + src + " to " + dst
	a, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return fmt.Errorf("%s: download %s: %w", r.host, src, err)
	}
	res, err := r.exec(ctx, command{
		what:   what,
		line:   wrapCommand(r.priv, "cat -- "+ShellQuote(src)),
		stdin:  commandStdin(r.priv, r.sudoPassword(), nil),
		stdout: a,
	})
	if err == nil {
		err = r.transferResult(what, res)
	}
	if err != nil {
		a.Abort()
		return err
	}
	if err := a.Commit(); err != nil {
		return transferError(r.host, what, err)
	}
	return nil
}

// transferResult is the error of a finished upload or download command:
// sudo's refusal, a full remote disk, or the command's first line of stderr.
func (r *sshRemote) transferResult(what string, res Result) error {
	if res.ExitCode == 0 {
		return nil
	}
	if r.priv != asRoot {
		if err := sudoError(r.host, r.d.cfg.User, res); err != nil {
			return err
		}
	}
	msg := firstLine(string(res.Stderr))
	if msg == "" {
		msg = fmt.Sprintf("exited %d", res.ExitCode)
	}
	if strings.Contains(string(res.Stderr), "No space left on device") {
		return fmt.Errorf("%s: %s: remote disk full (%s)", r.host, what, msg)
	}
	return fmt.Errorf("%s: %s: %s", r.host, what, msg)
}
