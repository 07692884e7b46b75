package main_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// Issue 29: every "redlock run" is a fresh process, which first meets the
// masters after they restarted. Three masters without persistence; run A
// holds "job" and runs a long command; two of the three masters restart
// empty, just after one of A's renewals (so that A's next renewal, which
// finds the lock lost, is a third of the TTL away). A second run B of the
// same key must not run its command while A's job runs: with -n it fails
// at once (status 1: A holds the lock; or 69: fewer than a quorum of the
// masters can grant, the restarted ones being held back by the restart
// guard), and waiting it gets the lock only once A's job ended. Before the masters kept the guard's
// record (4e95571), B took the two empty masters for fresh ones and ran
// its command beside A's.
func TestRunAfterMastersRestartedEmpty(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := t.TempDir()
	log, pid := filepath.Join(dir, "log"), filepath.Join(dir, "pid")
	jobA := "echo $$ > " + pid + "; trap 'echo A-end >> " + log + "; exit 0' TERM; echo A-start >> " + log + "; while :; do sleep 0.01; done"
	a := background(t, c.nodes, "run", "--ttl", "3s", "job", "--", "sh", "-c", jobA)
	await(t, "A's command to start", fileHas(log, "A-start"))
	leader := pidIn(t, pid)

	// Restart right after a renewal: A's next one is a second away, far
	// more than B needs to run its command if it is let in.
	pttl := func() int64 { return c.do(t, 2, "PTTL", "job").(int64) }
	before := pttl()
	await(t, "a renewal of A's lock", func() bool { return pttl() > before })
	restartEmpty(t, c.servers[:2])

	// jobB records whether A's job leader still ran when B's command did
	// (a zombie, which only waits to be reaped, does not count).
	jobB := "if kill -0 " + strconv.Itoa(leader) + " 2>/dev/null && ! grep -q '^[^)]*) Z' /proc/" + strconv.Itoa(leader) + "/stat 2>/dev/null; then echo B-beside-A >> " + log + "; fi; echo B-start >> " + log
	r := redlockRun(t, c.nodes, "run", "-n", "--ttl", "3s", "job", "--", "sh", "-c", jobB)
	if fileHas(log, "B-start")() {
		t.Fatalf("run -n ran its command while A held the lock (status %d, stderr %q); log:\n%s", r.code, r.stderr, readFile(t, log))
	}
	// Not acquired: held by A on the master that kept it (1), or fewer
	// than a quorum of the masters can grant (69), whichever the library
	// learnt first.
	if r.code != 1 && !(r.code == 69 && strings.Contains(r.stderr, "restarted recently")) {
		t.Errorf("run -n: status %d, stderr %q; want 1, or 69 naming the restart", r.code, r.stderr)
	}

	b := background(t, c.nodes, "run", "-w", "30s", "--ttl", "3s", "job", "--", "sh", "-c", jobB)
	if res := a.finish(t); res.code != 75 {
		t.Errorf("A: status %d, want 75 (its renewal found the lock lost); stderr %q", res.code, res.stderr)
	}
	if res := b.finish(t); res.code != 0 {
		t.Fatalf("waiting B: status %d, stderr %q", res.code, res.stderr)
	}
	if got, want := readFile(t, log), "A-start\nA-end\nB-start\n"; got != want {
		t.Fatalf("log:\n%swant:\n%s", got, want)
	}
}

// restartEmpty kills servers and starts them again at once: without
// persistence they come back empty.
func restartEmpty(t *testing.T, servers []*redisproc.Server) {
	t.Helper()
	for _, s := range servers {
		if err := s.Restart(0); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
