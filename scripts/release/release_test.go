package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/quorumlock/quorumlock"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The versions file is the one record of the modules' versions: it lists
// every module, and every module requires the others at those versions,
// with a replace to their directory for work inside the repository.
func TestVersionsAgree(t *testing.T) {
	r := root(t)
	mods, err := modules(r)
	if err != nil {
		t.Fatal(err)
	}
	byPath := make(map[string]repoModule)
	for _, m := range mods {
		byPath[m.Path] = m
	}
	for _, m := range mods {
		for _, req := range m.File.Require {
			dep, ok := byPath[req.Mod.Path]
			if !ok {
				continue
			}
			if req.Mod.Version != dep.Version {
				t.Errorf("%s/go.mod requires %s %s; the versions file says %s (go run ./scripts/release sync)", m.Dir, req.Mod.Path, req.Mod.Version, dep.Version)
			}
			replaced := false
			for _, rep := range m.File.Replace {
				if rep.Old.Path == req.Mod.Path && filepath.Join(r, m.Dir, rep.New.Path) == filepath.Join(r, dep.Dir) {
					replaced = true
				}
			}
			if !replaced {
				t.Errorf("%s/go.mod has no replace of %s by its directory", m.Dir, req.Mod.Path)
			}
		}
	}
	if v := quorumlock.Version(); v != byPath[quorumlock.Path].Version {
		t.Errorf("quorumlock.Version() = %s, want %s", v, byPath[quorumlock.Path].Version)
	}
}

// Every module carries the license, so that its module zip does.
func TestLicenses(t *testing.T) {
	r := root(t)
	license, err := os.ReadFile(filepath.Join(r, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(license, []byte("Apache License\n                           Version 2.0, January 2004")) ||
		!bytes.Contains(license, []byte("END OF TERMS AND CONDITIONS")) {
		t.Error("LICENSE is not the full text of the Apache License 2.0")
	}
	mods, err := modules(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		got, err := os.ReadFile(filepath.Join(r, m.Dir, "LICENSE"))
		if err != nil || !bytes.Equal(got, license) {
			t.Errorf("%s/LICENSE is not the repository's LICENSE (%v)", m.Dir, err)
		}
	}
}

// The changelog has an entry for the root module's version.
func TestChangelog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimPrefix(quorumlock.Version(), "v")
	entry := regexp.MustCompile(`(?m)^## \[` + regexp.QuoteMeta(v) + `\]`)
	if !entry.Match(data) {
		t.Errorf("CHANGELOG.md has no entry \"## [%s]\"", v)
	}
}

// The proxy holds each module at its version: its go.mod, and a valid
// module zip with its own files and none of a nested module's.
func TestProxy(t *testing.T) {
	r := root(t)
	mods, err := modules(r)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeProxy(r, mods, dir); err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		vdir := filepath.Join(dir, filepath.FromSlash(m.Path), "@v")
		if list, err := os.ReadFile(filepath.Join(vdir, "list")); err != nil || string(list) != m.Version+"\n" {
			t.Errorf("%s: list %q, %v", m.Path, list, err)
		}
		if mod, err := os.ReadFile(filepath.Join(vdir, m.Version+".mod")); err != nil || !bytes.Equal(mod, m.GoMod) {
			t.Errorf("%s: .mod is not its go.mod (%v)", m.Path, err)
		}
		zipPath := filepath.Join(vdir, m.Version+".zip")
		if _, err := modzip.CheckZip(module.Version{Path: m.Path, Version: m.Version}, zipPath); err != nil {
			t.Errorf("%s: %v", m.Path, err)
		}
		names := zipNames(t, zipPath, m.Path+"@"+m.Version+"/")
		for _, want := range []string{"go.mod", "LICENSE"} {
			if !slices.Contains(names, want) {
				t.Errorf("%s's zip lacks %s", m.Path, want)
			}
		}
	}
	core := zipNames(t, filepath.Join(dir, filepath.FromSlash(quorumlock.Path), "@v", quorumlock.Version()+".zip"), quorumlock.Path+"@"+quorumlock.Version()+"/")
	for _, want := range []string{"redlock/locker.go", "pubsub/registry.go", "cmd/redlock/main.go", "versions"} {
		if !slices.Contains(core, want) {
			t.Errorf("the core's zip lacks %s", want)
		}
	}
	for _, f := range core {
		if strings.HasPrefix(f, "adapters/goredis/") || strings.HasPrefix(f, "chaos/") {
			t.Errorf("the core's zip holds %s, a nested module's file", f)
		}
	}
}

// zipNames lists the files of a module zip, without its prefix.
func zipNames(t *testing.T, name, prefix string) []string {
	t.Helper()
	zr, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, strings.TrimPrefix(f.Name, prefix))
	}
	return names
}

// sync makes a go.mod require the repository's modules at the versions the
// file records, and leaves the rest alone.
func TestSync(t *testing.T) {
	r := t.TempDir() // not a git checkout: the files are walked
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(r, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("versions", ".  v0.2.0\nadapters/x  v0.3.0\n")
	write("go.mod", "module github.com/quorumlock/quorumlock\n\ngo 1.25.0\n")
	write("adapters/x/go.mod", "module github.com/quorumlock/quorumlock/adapters/x\n\ngo 1.25.0\n\nreplace github.com/quorumlock/quorumlock => ../..\n\nrequire (\n\tgithub.com/quorumlock/quorumlock v0.1.0\n\texample.com/other v1.0.0\n)\n")
	mods, err := modules(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := syncRequires(r, mods); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(r, "adapters", "x", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"github.com/quorumlock/quorumlock v0.2.0", "example.com/other v1.0.0", "replace github.com/quorumlock/quorumlock => ../.."} {
		if !strings.Contains(string(got), want) {
			t.Errorf("go.mod after sync lacks %q:\n%s", want, got)
		}
	}

	write("versions", ".  v0.2.0\n")
	if _, err := modules(r); err == nil {
		t.Error("a module missing from the versions file: no error")
	}
	write("versions", ".  v0.2.0\nadapters/x  v0.3.0\nadapters/y  v0.1.0\n")
	if _, err := modules(r); err == nil {
		t.Error("a listed module without a go.mod: no error")
	}
}
