package dockerbed

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// BuildImage imports the default image as tag, labelled label, with no
// registry: a root file system made here from local files and streamed to
// `docker import`. It holds a static busybox and its applets (the shell and
// the tools chaos's host commands use), the C library the chaos executable
// links against (so that chaos-node, uploaded at install, runs), etcd with
// its libraries when this machine has it, and the directories chaos uses.
// No iptables, no tc, no sshd: faults reach the containers from outside.
func BuildImage(ctx context.Context, e Engine, tag, label string) error {
	root, err := os.MkdirTemp("", "chaos-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if err := fillRoot(root); err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(pw, root)) }()
	_, err = e.Docker(ctx, pr, "import", "--change", "LABEL "+label, "-", tag)
	pr.Close()
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	return nil
}

// fillRoot lays the image's files out under root.
func fillRoot(root string) error {
	for _, d := range []string{"bin", "etc", "root", "tmp", "opt/chaos", "var/lib/chaos", "proc", "sys", "dev", "run", "usr/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777|fs.ModeSticky); err != nil {
		return err
	}
	files := map[string]string{"etc/passwd": "root:x:0:0:root:/root:/bin/sh\n", "etc/group": "root:x:0:\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := addBusybox(root); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := copyLibs(root, self); err != nil {
		return err
	}
	if etcd, err := exec.LookPath("etcd"); err == nil {
		if err := copyFile(root, etcd, "/usr/bin/etcd"); err != nil {
			return err
		}
		return copyLibs(root, etcd)
	}
	return nil
}

// addBusybox copies a static busybox to /bin with a link for each applet.
func addBusybox(root string) error {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return errors.New("busybox is missing: apt-get install busybox-static")
	}
	if libs, _ := libraries(bb); len(libs) > 0 {
		return fmt.Errorf("%s is not static: apt-get install busybox-static", bb)
	}
	if err := copyFile(root, bb, "/bin/busybox"); err != nil {
		return err
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return fmt.Errorf("busybox --list: %w", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// libraryRE matches the paths ldd lists: "libc.so.6 => /lib/.../libc.so.6
// (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)".
var libraryRE = regexp.MustCompile(`(?m)(/\S+) \(0x`)

// libraries are the shared libraries bin loads, as ldd lists them; none
// for a static executable.
func libraries(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		return nil, nil // "not a dynamic executable"
	}
	var libs []string
	for _, m := range libraryRE.FindAllStringSubmatch(string(out), -1) {
		libs = append(libs, m[1])
	}
	return libs, nil
}

// copyLibs copies the libraries bin loads to the same paths under root.
func copyLibs(root, bin string) error {
	libs, err := libraries(bin)
	if err != nil {
		return err
	}
	for _, lib := range libs {
		if err := copyFile(root, lib, lib); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies the file at src (following links) to dst under root,
// keeping its mode.
func copyFile(root, src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	target := filepath.Join(root, dst)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.WriteFile(target, data, info.Mode().Perm())
}

// writeTar writes the tree under root to w as a tar stream, owned by root.
func writeTar(w io.Writer, root string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = rel, 0, 0, "root", "root"
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
