package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

// A job here is a shell leader and a worker that ignores SIGTERM and
// writes its pid to a file. The tests check that no process of the job
// outlives what redlock promises, whatever the leader did.

// jobDir is a directory with worker.sh: "sh worker.sh FILE" ignores
// SIGTERM, writes its pid to FILE and sleeps (one process: it execs sleep).
func jobDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	worker := "trap '' TERM\necho $$ > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\nexec sleep 1000\n"
	if err := os.WriteFile(filepath.Join(dir, "worker.sh"), []byte(worker), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pidIn waits until the file at path holds a pid, returns it, and kills
// that process when the test ends (it must be dead by then already).
func pidIn(t *testing.T, path string) int {
	t.Helper()
	var pid int
	await(t, path+" to hold a pid", func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// alive reports whether pid runs (a zombie does not: it only waits to be
// reaped).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// mustBeDead fails the test for each pid still running.
func mustBeDead(t *testing.T, when string, pids map[string]int) {
	t.Helper()
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("%s: the %s (pid %d) still runs", when, name, pid)
		}
	}
}

// Item 1 of issue 22: the leader exits on SIGTERM, the worker it started
// ignores it; the kill timer must not stop with the leader.
func TestRunLostLockKillsWhatTheLeaderLeft(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := jobDir(t)
	w := filepath.Join(dir, "w")
	script := "trap 'exit 0' TERM; sh " + filepath.Join(dir, "worker.sh") + " " + w + " & wait"
	run := background(t, c.nodes, "run", "--ttl", "900ms", "--kill-after", "100ms", "job", "--", "sh", "-c", script)
	worker := pidIn(t, w)
	c.do(t, 0, "DEL", "job")
	c.do(t, 1, "DEL", "job")
	r := run.finish(t)
	if r.code != 75 {
		t.Fatalf("status %d, want 75 (lost the lock); stderr %q", r.code, r.stderr)
	}
	mustBeDead(t, "when redlock exited", map[string]int{"worker": worker})
}

// The leader ends normally and leaves a worker behind, in its process
// group or in a session of its own (setsid: the guardian, a subreaper,
// inherits it when its parent ends): redlock stops it, and releases the
// lock and exits only then, with the leader's status.
func TestRunStopsWhatTheCommandLeftBehind(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	for _, start := range []string{"sh", "setsid sh"} {
		t.Run(start, func(t *testing.T) {
			if _, err := exec.LookPath(strings.Fields(start)[0]); err != nil {
				t.Skip(err)
			}
			dir := jobDir(t)
			w := filepath.Join(dir, "w")
			script := start + " " + filepath.Join(dir, "worker.sh") + " " + w + " & while [ ! -e " + w + " ]; do sleep 0.01; done; exit 4"
			r := redlockRun(t, c.nodes, "run", "--kill-after", "100ms", "job", "--", "sh", "-c", script)
			worker := pidIn(t, w)
			if r.code != 4 {
				t.Fatalf("status %d, want the command's 4; stderr %q", r.code, r.stderr)
			}
			mustBeDead(t, "when redlock exited", map[string]int{"worker": worker})
			lk, err := c.locker(t, redlock.Config{}).TryLock(context.Background(), "job", 5*time.Second)
			if err != nil {
				t.Fatalf("the lock was not released: %v", err)
			}
			lk.Unlock(context.Background())
		})
	}
}

// Item 2 of issue 22: redlock is killed with SIGKILL. The job gets SIGTERM
// and is dead before the lock's validity ends, whatever --kill-after says:
// a second run of the same key, which gets the lock once it expired, finds
// no process of the first job.
func TestRunKilledRedlockLeavesNoJobBehind(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := jobDir(t)
	w, l, log := filepath.Join(dir, "w"), filepath.Join(dir, "l"), filepath.Join(dir, "log")
	script := "echo $$ > " + l + "; trap 'echo term >> " + log + "' TERM; sh " + filepath.Join(dir, "worker.sh") + " " + w +
		" & while :; do sleep 0.01; done"
	// Output to a file: a pipe would stay open as long as the job runs.
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	first := command(context.Background(), c.nodes, nil, "run", "--ttl", "2s", "--kill-after", "1m", "job", "--", "sh", "-c", script)
	first.Stdout, first.Stderr = out, out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	worker, leader := pidIn(t, w), pidIn(t, l)
	first.Process.Kill()
	first.Wait()
	// The second run's command reports, the moment it holds the lock,
	// which processes of the first job still run.
	secondRunFindsNone(t, c, leader, worker)
	if !fileHas(log, "term")() {
		t.Error("the first job's leader got no SIGTERM before its SIGKILL")
	}
}

// Renewals stop getting through (the masters refuse redlock's user, as
// if unreachable): the job must be dead before the lock's validity ends,
// --kill-after (1m) notwithstanding, so a second run that gets the lock
// once it expired finds no process of the first job.
func TestRunStopsTheJobBeforeItsValidityEnds(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	var nodes []string
	for i, s := range c.servers {
		c.do(t, i, "ACL", "SETUSER", "first", "on", ">pw", "~*", "&*", "+@all")
		nodes = append(nodes, "redis://first:pw@"+s.Addr())
	}
	dir := jobDir(t)
	w, l := filepath.Join(dir, "w"), filepath.Join(dir, "l")
	script := "echo $$ > " + l + "; trap '' TERM; sh " + filepath.Join(dir, "worker.sh") + " " + w + " & while :; do sleep 0.01; done"
	first := background(t, strings.Join(nodes, ","), "run", "--json", "--ttl", "1500ms", "--kill-after", "1m", "job", "--", "sh", "-c", script)
	worker, leader := pidIn(t, w), pidIn(t, l)
	for i := range c.servers {
		c.do(t, i, "ACL", "SETUSER", "first", "-@all")
	}
	secondRunFindsNone(t, c, leader, worker)
	fr := first.finish(t)
	var res struct {
		Outcome  string
		ExitCode int `json:"exit_code"`
	}
	decode(t, fr.stderr, &res)
	if fr.code != 75 || res.Outcome != "lost" {
		t.Errorf("first run: status %d, outcome %q; want 75, lost", fr.code, res.Outcome)
	}
}

// secondRunFindsNone runs the key "job" again: its command lists, the moment
// it holds the lock, which of pids still run (zombies, which only wait to
// be reaped, do not).
func secondRunFindsNone(t *testing.T, c *cluster, pids ...int) {
	t.Helper()
	var list []string
	for _, p := range pids {
		list = append(list, strconv.Itoa(p))
	}
	check := "for p in " + strings.Join(list, " ") +
		"; do if kill -0 $p 2>/dev/null && ! grep -q '^[^)]*) Z' /proc/$p/stat 2>/dev/null; then echo alive $p; fi; done; echo checked"
	r := redlockRun(t, c.nodes, "run", "job", "--", "sh", "-c", check)
	if r.code != 0 || !strings.Contains(r.stdout, "checked") {
		t.Fatalf("second run: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "alive") {
		t.Errorf("the second run got the lock while the first job still ran: %q", r.stdout)
	}
}

// The guardian itself is killed: redlock kills every process of the job,
// then releases the lock and exits 70.
func TestRunKilledGuardian(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := jobDir(t)
	w, g := filepath.Join(dir, "w"), filepath.Join(dir, "g")
	script := "echo $PPID > " + g + "; sh " + filepath.Join(dir, "worker.sh") + " " + w + " & while :; do sleep 0.01; done"
	run := background(t, c.nodes, "run", "--kill-after", "1m", "job", "--", "sh", "-c", script)
	worker, guardian := pidIn(t, w), pidIn(t, g)
	if guardian == run.cmd.Process.Pid {
		t.Fatal("the command is redlock's own child: no guardian")
	}
	syscall.Kill(guardian, syscall.SIGKILL)
	r := run.finish(t)
	if r.code != 70 || !strings.Contains(r.stderr, "guardian died") {
		t.Fatalf("status %d, stderr %q; want 70 and the guardian's death", r.code, r.stderr)
	}
	mustBeDead(t, "when redlock exited", map[string]int{"worker": worker})
	lk, err := c.locker(t, redlock.Config{}).TryLock(context.Background(), "job", 5*time.Second)
	if err != nil {
		t.Fatalf("the lock was not released: %v", err)
	}
	lk.Unlock(context.Background())
}
