package main_test

import (
	"slices"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// keysLeft lists the keys on master i of c, but the restart guard's
// record (which never expires: it is the guard's memory) and tombstones.
// A release that overtakes its acquire on a slow master leaves a
// tombstone there, by design (redlock.Lock.Unlock): it refuses that late
// acquire, and it must expire on its own, within a minute.
func (c *cluster) keysLeft(t *testing.T, i int) []string {
	t.Helper()
	var left []string
	for _, k := range c.do(t, i, "KEYS", "*").([]any) {
		name := string(k.([]byte))
		switch {
		case name == "{quorumlock}:guard":
		case layout.IsTomb(name):
			if ms := c.do(t, i, "PTTL", name).(int64); ms <= 0 || ms > time.Minute.Milliseconds() {
				t.Errorf("master %d: tombstone %s has PTTL %d ms; want one that expires within a minute", i, name, ms)
			}
		default:
			left = append(left, name)
		}
	}
	slices.Sort(left)
	return left
}

// TestRunLeavesNothingBehind: twenty short runs in a row, each a fresh
// process that exits right after it released the lock, leave no key on
// any master but tombstones: the release reached every master before
// redlock exited.
func TestRunLeavesNothingBehind(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	for n := range 20 {
		if r := redlockRun(t, c.nodes, "run", "job", "--", "true"); r.code != 0 {
			t.Fatalf("run %d: status %d, stderr %q", n, r.code, r.stderr)
		}
		for i := range c.servers {
			if left := c.keysLeft(t, i); len(left) > 0 {
				t.Fatalf("after run %d, master %d keeps %q", n, i, left)
			}
		}
	}
}

// TestRunRefusedLeavesNothingBehind: a run refused on two masters of
// three was granted on the third; the release of that partial grant must
// reach it before redlock exits, or it holds the lock there for its TTL.
func TestRunRefusedLeavesNothingBehind(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	const other = "JBSWY3DPEHPK3PXPJBSWY3DPEH"
	for n := range 20 {
		for i := range 2 {
			c.do(t, i, "SET", "job", other, "PX", 60000)
		}
		if r := redlockRun(t, c.nodes, "run", "-n", "job", "--", "true"); r.code != 1 {
			t.Fatalf("run %d: status %d, stderr %q; want 1 (held elsewhere)", n, r.code, r.stderr)
		}
		if left := c.keysLeft(t, 2); len(left) > 0 {
			t.Fatalf("after run %d, master 2 keeps %q", n, left)
		}
	}
}
