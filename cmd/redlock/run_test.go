package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

// holdUntil is a shell command that appends "<name>-start" to log, waits
// until the file gate exists, and appends "<name>-end".
func holdUntil(name, log, gate string) string {
	return "echo " + name + "-start >> " + log + "; while [ ! -e " + gate + " ]; do sleep 0.01; done; echo " + name + "-end >> " + log
}

// waiting reports whether some process waits for a release of key on a
// master (a waiting Lock subscribes after its first refused attempt).
func (c *cluster) waiting(t *testing.T, key string) func() bool {
	return func() bool {
		for i := range c.servers {
			reply, _ := c.do(t, i, "PUBSUB", "NUMSUB", redlock.ReleaseChannel(key)).([]any)
			if len(reply) == 2 && reply[1].(int64) > 0 {
				return true
			}
		}
		return false
	}
}

func TestRunSerialises(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := t.TempDir()
	log, gate := filepath.Join(dir, "log"), filepath.Join(dir, "gate")
	a := background(t, c.nodes, "run", "job", "--", "sh", "-c", holdUntil("A", log, gate))
	await(t, "A to start", fileHas(log, "A-start"))
	b := background(t, c.nodes, "run", "job", "--", "sh", "-c", "echo B-start >> "+log+"; echo B-end >> "+log)
	await(t, "B to wait for the lock", c.waiting(t, "job"))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]result{"A": a.finish(t), "B": b.finish(t)} {
		if r.code != 0 {
			t.Errorf("run %s: status %d, stderr %q", name, r.code, r.stderr)
		}
	}
	got, _ := os.ReadFile(log)
	if want := "A-start\nA-end\nB-start\nB-end\n"; string(got) != want {
		t.Fatalf("the two runs interleaved:\n%s", got)
	}
}

func TestRunConflict(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := t.TempDir()
	log, gate, ran := filepath.Join(dir, "log"), filepath.Join(dir, "gate"), filepath.Join(dir, "ran")
	holder := background(t, c.nodes, "run", "job", "--", "sh", "-c", holdUntil("A", log, gate))
	await(t, "the holder to start", fileHas(log, "A-start"))
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-n"}, 1},
		{[]string{"--nonblock", "-E", "7"}, 7},
		{[]string{"--conflict-exit-code=0", "-n"}, 0},
		{[]string{"-w", "200ms"}, 1},
		{[]string{"--timeout", "0.2"}, 1},
	} {
		args := append(append([]string{"run"}, tc.args...), "job", "--", "touch", ran)
		r := redlockRun(t, c.nodes, args...)
		if r.code != tc.want {
			t.Errorf("%v: status %d, want %d (stderr %q)", tc.args, r.code, tc.want, r.stderr)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%v: the command ran without the lock", tc.args)
		}
	}
	r := redlockRun(t, c.nodes, "run", "--json", "-n", "job", "--", "touch", ran)
	var res struct {
		Outcome       string
		Acquired      bool
		CommandStatus *int `json:"command_status"`
		ExitCode      int  `json:"exit_code"`
	}
	decode(t, r.stderr, &res)
	if res.Outcome != "conflict" || res.Acquired || res.CommandStatus != nil || res.ExitCode != 1 || r.code != 1 {
		t.Errorf("--json conflict: %+v, status %d", res, r.code)
	}
	os.WriteFile(gate, nil, 0o644)
	if r := holder.finish(t); r.code != 0 {
		t.Fatalf("holder: status %d, stderr %q", r.code, r.stderr)
	}
}

func TestRunEnvironmentStatusAndRelease(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	r := redlockRun(t, c.nodes, "run", "--fence", "job", "--", "sh", "-c", `echo "$REDLOCK_KEY $REDLOCK_TOKEN $REDLOCK_FENCE"; exit 3`)
	if r.code != 3 {
		t.Fatalf("status %d, want the command's 3 (stderr %q)", r.code, r.stderr)
	}
	f := strings.Fields(r.stdout)
	fence, err := strconv.ParseInt(f[2], 10, 64)
	if len(f) != 3 || f[0] != "job" || len(f[1]) < 20 || err != nil || fence < 1 {
		t.Fatalf("the command's environment: %q, want KEY, TOKEN and a positive FENCE", r.stdout)
	}
	for i := range c.servers {
		if n := c.do(t, i, "EXISTS", "job"); n != int64(0) {
			t.Fatalf("master %d still holds the lock after the command failed", i)
		}
	}
	r = redlockRun(t, c.nodes, "run", "--json", "--fence", "job", "--", "true")
	var res struct {
		Key, Token, Outcome string
		Fence               int64
		Acquired            bool
		CommandStatus       *int `json:"command_status"`
		ExitCode            int  `json:"exit_code"`
	}
	decode(t, r.stderr, &res)
	if r.code != 0 || res.Key != "job" || !res.Acquired || res.Token == "" || res.Fence <= fence || res.Outcome != "done" ||
		res.CommandStatus == nil || *res.CommandStatus != 0 || res.ExitCode != 0 {
		t.Fatalf("--json: %+v, status %d", res, r.code)
	}
}

func TestRunLostLockStopsTheCommand(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	log := filepath.Join(t.TempDir(), "log")
	script := `trap 'echo term >> ` + log + `; exit 0' TERM; echo started >> ` + log + `; while :; do sleep 0.01; done`
	run := background(t, c.nodes, "run", "--ttl", "900ms", "job", "--", "sh", "-c", script)
	await(t, "the command to start", fileHas(log, "started"))
	c.do(t, 0, "DEL", "job")
	c.do(t, 1, "DEL", "job")
	r := run.finish(t)
	if r.code != 75 {
		t.Fatalf("status %d, want 75 (lost the lock); stderr %q", r.code, r.stderr)
	}
	if !fileHas(log, "term")() {
		t.Fatal("the command did not get SIGTERM")
	}
	// The command's shell may report its killed sleep; redlock says one line.
	var own []string
	for line := range strings.Lines(r.stderr) {
		if strings.HasPrefix(line, "redlock:") {
			own = append(own, line)
		}
	}
	if len(own) != 1 || !strings.Contains(own[0], "lost the lock") {
		t.Fatalf("stderr %q: want one line saying the lock was lost", r.stderr)
	}
}

func TestRunKillsACommandThatIgnoresSIGTERM(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	log := filepath.Join(t.TempDir(), "log")
	script := `trap '' TERM; echo started >> ` + log + `; while :; do sleep 0.01; done`
	run := background(t, c.nodes, "run", "--ttl", "900ms", "--kill-after", "100ms", "job", "--", "sh", "-c", script)
	await(t, "the command to start", fileHas(log, "started"))
	c.do(t, 1, "DEL", "job")
	c.do(t, 2, "DEL", "job")
	if r := run.finish(t); r.code != 75 {
		t.Fatalf("status %d, want 75; stderr %q", r.code, r.stderr)
	}
}

func TestRunForwardsSignals(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	log := filepath.Join(t.TempDir(), "log")
	script := `trap 'echo int >> ` + log + `; exit 5' INT; echo started >> ` + log + `; while :; do sleep 0.01; done`
	run := background(t, c.nodes, "run", "job", "--", "sh", "-c", script)
	await(t, "the command to start", fileHas(log, "started"))
	if err := run.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if r := run.finish(t); r.code != 5 {
		t.Fatalf("status %d, want the command's 5; stderr %q", r.code, r.stderr)
	}
	if !fileHas(log, "int")() {
		t.Fatal("the command did not get the SIGINT")
	}
	lk, err := c.locker(t, redlock.Config{}).TryLock(context.Background(), "job", 5*time.Second)
	if err != nil {
		t.Fatalf("the lock was not released after the command ended: %v", err)
	}
	lk.Unlock(context.Background())
}

// TestRunFailsAtOnceWithoutINFO: the client's user may not run INFO on
// any master, so the restart guard cannot read which process they are and
// the library refuses every grant (a misconfiguration): run, even waiting
// without a limit, exits 64 at once, naming the permission, and its
// command never runs.
func TestRunFailsAtOnceWithoutINFO(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	var nodes []string
	for i, s := range c.servers {
		c.do(t, i, "ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info")
		nodes = append(nodes, "redis://noinfo:pw@"+s.Addr())
	}
	ran := filepath.Join(t.TempDir(), "ran")
	r := redlockRun(t, strings.Join(nodes, ","), "run", "job", "--", "touch", ran)
	if r.code != 64 || !strings.Contains(r.stderr, "+info") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("status %d, stderr %q; want 64 and the permission named in one line", r.code, r.stderr)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran")
	}
}
