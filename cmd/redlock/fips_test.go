package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

// TestFIPS140Only: the command works under GODEBUG=fips140=only, where
// any use of SHA-1 panics: doctor, run (with inspect run by the job, which
// inherits the setting) and an unlock round.
func TestFIPS140Only(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{AppendOnly: true})
	fips := []string{"GODEBUG=fips140=only"}
	if r := redlockRunEnv(t, c.nodes, fips, "doctor"); r.code != 0 || !strings.Contains(r.stdout, "guarantee: durable by configuration") {
		t.Fatalf("doctor: status %d, output %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "inspect.json")
	if r := redlockRunEnv(t, c.nodes, fips, "run", "fips", "--", "sh", "-c", bin+" inspect --json fips > "+out); r.code != 0 {
		t.Fatalf("run: status %d, stderr %q", r.code, r.stderr)
	}
	b, _ := os.ReadFile(out)
	var rep inspectJSON
	decode(t, string(b), &rep)
	if !rep.Held || rep.Holders[0].Record == nil {
		t.Fatalf("inspect within run: %+v", rep)
	}
	l := c.locker(t, redlock.Config{})
	lk, err := l.Lock(ctx, "a", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lock(ctx, "b", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"unlock", "a", "--token", lk.Token()}, {"unlock", "b", "--force"}} {
		if r := redlockRunEnv(t, c.nodes, fips, args...); r.code != 0 {
			t.Errorf("%v: status %d, output %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if c.exists(t, "a")+c.exists(t, "b")+c.exists(t, "fips") != 0 {
		t.Fatal("locks left behind")
	}
}
