package control

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"
)

// Upload implements Remote: the file goes into the container as a one-file
// tar stream through `docker cp -` (the Engine's archive API) under a
// hidden temporary name beside remote, and is renamed over remote by an
// exec, so readers see the old file or the whole new one. A failed upload
// removes its temporary file.
func (r *dockerRemote) Upload(ctx context.Context, local, remote string, mode os.FileMode) error {
	what := "upload " + local + " to " + remote
	if r.closed.Load() {
		return r.errClosed(what)
	}
	f, err := os.Open(local)
	if err != nil {
		return fmt.Errorf("%s: upload: %w", r.host, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: upload: %w", r.host, err)
	}
	tmp := tempName(remote)
	if err := r.copyIn(ctx, f, info.Size(), tmp, mode); err != nil {
		r.remove(ctx, tmp)
		return transferError(r.host, what, err)
	}
	mv := "mv -f " + ShellQuote(tmp) + " " + ShellQuote(remote)
	res, err := r.Run(ctx, mv)
	if err == nil {
		err = res.Err(r.host, mv)
	}
	if err != nil {
		r.remove(ctx, tmp)
		return fmt.Errorf("%s: %s: %w", r.host, what, err)
	}
	return nil
}

// tempName is a new hidden name beside path for its upload: ".BASE.HEX.tmp".
func tempName(p string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return path.Join(path.Dir(p), "."+path.Base(p)+"."+hex.EncodeToString(b[:])+".tmp")
}

// copyIn streams size bytes of src into the container as the file dst
// with mode, through `docker cp - CONTAINER:DIR`.
func (r *dockerRemote) copyIn(ctx context.Context, src io.Reader, size int64, dst string, mode os.FileMode) error {
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path.Base(dst), Mode: int64(mode.Perm()),
			Size: size, ModTime: time.Now()}
		err := tw.WriteHeader(hdr)
		if err == nil {
			_, err = io.CopyN(tw, ctxReader{ctx, src}, size)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	c := r.command(ctx, "cp", "-", r.container+":"+path.Dir(dst))
	c.Stdin = pr
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	pr.Close()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if err != nil {
		return dockerCpError(stderr.Bytes(), err)
	}
	return nil
}

// remove deletes path in the container, on a best-effort basis (after a
// failed upload, ctx may be over).
func (r *dockerRemote) remove(ctx context.Context, path string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
	defer cancel()
	_, _ = r.Run(ctx, "rm -f "+ShellQuote(path))
}

// Download implements Remote: `docker cp -L CONTAINER:PATH -` streams the
// file (its link's target when it is a symbolic link) as a tar stream,
// whose one regular file is written to local atomically.
func (r *dockerRemote) Download(ctx context.Context, remote, local string) error {
	what := "download " + remote + " to " + local
	if r.closed.Load() {
		return r.errClosed(what)
	}
	c := r.command(ctx, "cp", "-L", r.container+":"+remote, "-")
	out, err := c.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%s: %s: %w", r.host, what, err)
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		return fmt.Errorf("%s: %s: %w", r.host, what, err)
	}
	copyErr := copyOut(ctx, out, local)
	_, _ = io.Copy(io.Discard, out)
	waitErr := c.Wait()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return transferError(r.host, what, ctxErr)
	}
	if waitErr != nil {
		return transferError(r.host, what, dockerCpError(stderr.Bytes(), waitErr))
	}
	if copyErr != nil {
		return transferError(r.host, what, copyErr)
	}
	return nil
}

// copyOut writes the first entry of the tar stream in to local, atomically;
// it must be a regular file.
func copyOut(ctx context.Context, in io.Reader, local string) error {
	tr := tar.NewReader(in)
	hdr, err := tr.Next()
	if err != nil {
		return fmt.Errorf("reading docker cp's archive: %w", err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return fmt.Errorf("not a regular file (tar type %q)", hdr.Typeflag)
	}
	return copyAtomic(ctx, tr, local, 0o644)
}

// errNoSuchPath wraps os.ErrNotExist for a path the container lacks.
var errNoSuchPath = fmt.Errorf("no such file or directory in the container: %w", os.ErrNotExist)

// dockerCpError is docker cp's failure, from its stderr's last line.
func dockerCpError(stderr []byte, err error) error {
	msg := firstLine(lastLines(string(stderr), 1))
	switch {
	case msg == "":
		return err
	case bytes.Contains(stderr, []byte("Could not find the file")) || bytes.Contains(stderr, []byte("No such container:path")):
		return errNoSuchPath
	}
	return errors.New(clip(msg, 240))
}
