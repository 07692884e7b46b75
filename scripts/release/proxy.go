package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// writeProxy writes a file-based module proxy to dir (GOPROXY=file://dir)
// that serves every module of mods at its version, made from the files of
// the tree at root.
func writeProxy(root string, mods []repoModule, dir string) error {
	files, err := repoFiles(root)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	for _, m := range mods {
		escaped, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{m.Version, now})
		if err != nil {
			return err
		}
		for name, data := range map[string][]byte{
			"list":              []byte(m.Version + "\n"),
			m.Version + ".info": info,
			m.Version + ".mod":  m.GoMod,
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				return err
			}
		}
		if err := writeZip(filepath.Join(vdir, m.Version+".zip"), root, m, moduleFiles(files, m, mods)); err != nil {
			return fmt.Errorf("%s@%s: %w", m.Path, m.Version, err)
		}
	}
	return nil
}

// writeZip writes m's module zip, of files (relative to m's directory), to
// name.
func writeZip(name, root string, m repoModule, files []string) (err error) {
	zfiles := make([]zip.File, len(files))
	for i, f := range files {
		zfiles[i] = treeFile{rel: f, abs: filepath.Join(root, filepath.FromSlash(m.Dir), filepath.FromSlash(f))}
	}
	w, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	return zip.Create(w, module.Version{Path: m.Path, Version: m.Version}, zfiles)
}

// treeFile is a file of the working tree as golang.org/x/mod/zip takes it.
type treeFile struct{ rel, abs string }

func (f treeFile) Path() string                 { return f.rel }
func (f treeFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
