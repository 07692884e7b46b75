package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/quorumlock/quorumlock"
)

// repoModule is one Go module of the repository.
type repoModule struct {
	Dir     string // relative to the repository's root, slash-separated; "." for the root
	Path    string // module path, from its go.mod
	Version string // from the versions file
	GoMod   []byte
	File    *modfile.File
}

// repoRoot returns the repository's root: the nearest directory above the
// working directory that holds the versions file.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "versions")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no versions file in the working directory or above it")
		}
		dir = parent
	}
}

// repoFiles lists the repository's files, slash-separated and relative to
// root: what git tracks or does not ignore, or, without git, every file
// outside .git.
func repoFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		var files []string
		for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			// A tracked file deleted in the working tree is no longer part of it.
			if _, err := os.Lstat(filepath.Join(root, f)); err == nil {
				files = append(files, f)
			}
		}
		return files, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

// modules returns the repository's modules: every go.mod of the tree (none
// under testdata), each with its version from the versions file, which
// must list exactly these, at their module paths.
func modules(root string) ([]repoModule, error) {
	versionsFile, err := os.ReadFile(filepath.Join(root, "versions"))
	if err != nil {
		return nil, err
	}
	versions, err := quorumlock.ParseVersions(string(versionsFile))
	if err != nil {
		return nil, err
	}
	files, err := repoFiles(root)
	if err != nil {
		return nil, err
	}
	var mods []repoModule
	for _, f := range files {
		if path.Base(f) != "go.mod" || slices.Contains(strings.Split(f, "/"), "testdata") {
			continue
		}
		dir := path.Dir(f)
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		mf, err := modfile.Parse(f, data, nil)
		if err != nil {
			return nil, err
		}
		want := quorumlock.Path
		if dir != "." {
			want += "/" + dir
		}
		if mf.Module == nil || mf.Module.Mod.Path != want {
			return nil, fmt.Errorf("%s: module path is not %s, as its directory makes it", f, want)
		}
		version, ok := versions[want]
		if !ok {
			return nil, fmt.Errorf("%s: the versions file has no line for %s", f, dir)
		}
		delete(versions, want)
		mods = append(mods, repoModule{Dir: dir, Path: want, Version: version, GoMod: data, File: mf})
	}
	if len(versions) > 0 {
		return nil, fmt.Errorf("the versions file lists %s, which has no go.mod", slices.Sorted(maps.Keys(versions)))
	}
	slices.SortFunc(mods, func(a, b repoModule) int { return strings.Compare(a.Dir, b.Dir) })
	return mods, nil
}

// within reports whether the slash-separated path f lies in dir.
func within(f, dir string) bool { return dir == "." || strings.HasPrefix(f, dir+"/") }

// moduleFiles returns the files of mod: those in its directory and not in
// the directory of a module nested in it, relative to its directory.
func moduleFiles(files []string, mod repoModule, mods []repoModule) []string {
	var out []string
	for _, f := range files {
		if !within(f, mod.Dir) {
			continue
		}
		nested := false
		for _, other := range mods {
			if other.Dir != mod.Dir && within(other.Dir+"/", mod.Dir) && within(f, other.Dir) {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, strings.TrimPrefix(f, mod.Dir+"/"))
		}
	}
	return out
}
