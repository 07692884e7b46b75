package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock"
)

func TestVersion(t *testing.T) {
	r := redlockRun(t, "", "version", "--json")
	if r.code != 0 {
		t.Fatalf("redlock version --json: status %d, stderr %q", r.code, r.stderr)
	}
	var v struct{ Command, Module, Core, Go string }
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("redlock version --json: %v in %q", err, r.stdout)
	}
	// Built in this checkout: the command is (devel), the core the tree's.
	if v.Command != "(devel)" || v.Module != quorumlock.Path || v.Core != quorumlock.Version() || !strings.HasPrefix(v.Go, "go") {
		t.Errorf("redlock version --json = %+v", v)
	}
	r = redlockRun(t, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "redlock (devel)") || !strings.Contains(r.stdout, quorumlock.Path+" "+quorumlock.Version()) {
		t.Errorf("redlock version: status %d, output %q", r.code, r.stdout)
	}
	if r := redlockRun(t, "", "version", "extra"); r.code != 64 {
		t.Errorf("redlock version extra: status %d, want 64", r.code)
	}
}
