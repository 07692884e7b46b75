package redlock

import (
	"crypto/sha1"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
	"testing"
)

// The digests computed at build time (digests.go) are those of the scripts
// embedded, one for each: a script edited without go generate fails here.
func TestScriptDigests(t *testing.T) {
	files, err := fs.Glob(scriptFiles, "scripts/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(scriptDigests) {
		t.Errorf("%d scripts, %d digests: run go generate ./redlock", len(files), len(scriptDigests))
	}
	for _, f := range files {
		src, err := scriptFiles.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.Sum(src)
		name := strings.TrimSuffix(path.Base(f), ".lua")
		if want := hex.EncodeToString(sum[:]); scriptDigests[name] != want {
			t.Errorf("%s: digest %q, want %q: run go generate ./redlock", name, scriptDigests[name], want)
		}
	}
}
