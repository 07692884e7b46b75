package quorumlock_test

import (
	"regexp"
	"testing"

	"github.com/quorumlock/quorumlock"
)

// semver is what the go command accepts as a module version.
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

func TestVersions(t *testing.T) {
	v, err := quorumlock.Versions()
	if err != nil {
		t.Fatal(err)
	}
	for path, version := range v {
		if !semver.MatchString(version) {
			t.Errorf("%s: version %q is not a semantic version", path, version)
		}
	}
	if got := quorumlock.Version(); got != v[quorumlock.Path] || got == "" {
		t.Errorf("Version() = %q, want the root module's %q", got, v[quorumlock.Path])
	}
}

func TestParseVersions(t *testing.T) {
	got, err := quorumlock.ParseVersions("# comment\n.  v1.2.3\nadapters/x/ v0.1.0\n\n")
	if err != nil || got[quorumlock.Path] != "v1.2.3" || got[quorumlock.Path+"/adapters/x"] != "v0.1.0" || len(got) != 2 {
		t.Errorf("ParseVersions = %v, %v", got, err)
	}
	for _, bad := range []string{"", "adapters/x v0.1.0", ". v1\n. v2", ". 1.0.0", ". v1 extra"} {
		if _, err := quorumlock.ParseVersions(bad); err == nil {
			t.Errorf("ParseVersions(%q): no error", bad)
		}
	}
}
