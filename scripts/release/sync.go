package main

import (
	"bytes"
	"os"
	"path/filepath"
)

// syncRequires makes every go.mod of mods (in the repository at root) require the repository's
// modules at their versions, and rewrites the files that change. Their
// replace directives, which point to the modules' directories for work
// inside the repository, stay.
func syncRequires(root string, mods []repoModule) error {
	want := make(map[string]string, len(mods))
	for _, m := range mods {
		want[m.Path] = m.Version
	}
	for _, m := range mods {
		changed := false
		for _, r := range m.File.Require {
			if v, ok := want[r.Mod.Path]; ok && r.Mod.Version != v {
				if err := m.File.AddRequire(r.Mod.Path, v); err != nil {
					return err
				}
				changed = true
			}
		}
		if !changed {
			continue
		}
		data, err := m.File.Format()
		if err != nil {
			return err
		}
		if bytes.Equal(data, m.GoMod) {
			continue
		}
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
