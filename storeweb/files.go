package storeweb

import (
	"archive/zip"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

// File is a regular file of a run or campaign directory.
type File struct {
	// Path is relative to the directory, slash-separated.
	Path     string
	Size     int64
	Modified time.Time
}

// Files lists the regular files under the store directory rel (a path
// checked by join), in lexical order of their paths. Symlinks inside it
// are left out, followed or not, so nothing listed lies outside rel.
func (s *Store) Files(rel string) ([]File, error) {
	var files []File
	err := fs.WalkDir(s.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, File{Path: strings.TrimPrefix(p, rel+"/"), Size: info.Size(), Modified: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, refusal(err)
	}
	return files, nil
}

// WriteZip writes the store directory rel to w as a zip archive: an entry
// per file of Files, named by its Path, compressed, with its modification
// time. Once it has started writing, an error leaves w holding a cut
// archive.
func (s *Store) WriteZip(w io.Writer, rel string) error {
	files, err := s.Files(rel)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	for _, f := range files {
		if err := s.addToZip(zw, path.Join(rel, f.Path), f); err != nil {
			return err
		}
	}
	return zw.Close()
}

// addToZip writes the store file rel as the entry f.Path of zw.
func (s *Store) addToZip(zw *zip.Writer, rel string, f File) error {
	in, err := s.open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := zw.CreateHeader(&zip.FileHeader{Name: f.Path, Method: zip.Deflate, Modified: f.Modified})
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("zip %s: %w", rel, err)
	}
	return nil
}
