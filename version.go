package quorumlock

import (
	_ "embed"
	"fmt"
	"strings"
)

// Path is the module path of this module, the root of every module path
// of the repository.
const Path = "github.com/quorumlock/quorumlock"

//go:embed versions
var versionsFile string

// Version returns this module's version as the versions file records it:
// the version this tree is, or will be released as. A binary built from a
// module proxy knows its own version too, from the go command
// (runtime/debug.ReadBuildInfo); `redlock version` prints both.
func Version() string {
	v, err := Versions()
	if err != nil {
		panic(err) // the repository's tests keep the file well-formed
	}
	return v[Path]
}

// Versions returns the version of every module of the repository, by
// module path (Path for the root module, Path + "/adapters/goredis" for
// the one in adapters/goredis), as the versions file records them.
func Versions() (map[string]string, error) { return ParseVersions(versionsFile) }

// ParseVersions parses a versions file: one module a line, its directory
// relative to the repository's root and its version, separated by white
// space; blank lines and lines starting with # are left out. It returns
// the versions by module path.
func ParseVersions(file string) (map[string]string, error) {
	versions := make(map[string]string)
	for i, line := range strings.Split(file, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[1], "v") {
			return nil, fmt.Errorf("quorumlock: versions line %d: %q, want a directory and a version", i+1, line)
		}
		path := Path
		if f[0] != "." {
			path += "/" + strings.TrimSuffix(f[0], "/")
		}
		if _, dup := versions[path]; dup {
			return nil, fmt.Errorf("quorumlock: versions line %d: %s listed twice", i+1, f[0])
		}
		versions[path] = f[1]
	}
	if versions[Path] == "" {
		return nil, fmt.Errorf("quorumlock: versions: no line for the root module (.)")
	}
	return versions, nil
}
