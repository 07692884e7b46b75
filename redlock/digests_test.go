package redlock

import (
	"crypto/sha1"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/redlock/internal/recorded"
)

// The digests computed at build time (digests.go) are those of the scripts
// embedded, one for each and for each in every mode of a lock with a
// holder record: a script edited without go generate fails here.
func TestScriptDigests(t *testing.T) {
	files, err := fs.Glob(scriptFiles, "scripts/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	if len(files)*(1+len(recorded.Modes)) != len(scriptDigests) {
		t.Errorf("%d scripts, %d digests: run go generate ./redlock", len(files), len(scriptDigests))
	}
	for _, f := range files {
		src, err := scriptFiles.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(path.Base(f), ".lua")
		checkDigest(t, name, string(src))
		for _, m := range recorded.Modes {
			checkDigest(t, recorded.Name(name, m), recorded.Wrap(string(src), m))
		}
	}
}

// checkDigest fails t unless name's digest is src's.
func checkDigest(t *testing.T, name, src string) {
	t.Helper()
	sum := sha1.Sum([]byte(src))
	if want := hex.EncodeToString(sum[:]); scriptDigests[name] != want {
		t.Errorf("%s: digest %q, want %q: run go generate ./redlock", name, scriptDigests[name], want)
	}
}
