package main_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// holdJob is a shell command that writes its REDLOCK_TOKEN to tok and
// waits until the file gate exists.
func holdJob(tok, gate string) string {
	return "echo $REDLOCK_TOKEN > " + tok + "; while [ ! -e " + gate + " ]; do sleep 0.01; done"
}

// readToken waits for the job's token in the file tok.
func readToken(t *testing.T, tok string) string {
	t.Helper()
	await(t, "the job's token", fileHas(tok, "\n"))
	b, _ := os.ReadFile(tok)
	return strings.TrimSpace(string(b))
}

func TestRunRecordsItsHolder(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := t.TempDir()
	tok, gate := filepath.Join(dir, "tok"), filepath.Join(dir, "gate")
	before := time.Now().Add(-time.Second)
	run := background(t, c.nodes, "run", "--note", "nightly export, ops", "job", "--", "sh", "-c", holdJob(tok, gate))
	token := readToken(t, tok)
	var rep inspectJSON
	await(t, "the record to name the command's pid", func() bool {
		rep = inspect(t, c, "job")
		return len(rep.Holders) == 1 && rep.Holders[0].Record != nil && rep.Holders[0].Record.CommandPID > 0
	})
	host, _ := os.Hostname()
	r := rep.Holders[0].Record
	started, err := time.Parse(time.RFC3339, r.Started)
	if r.Token != token || r.Host != host || r.PID != run.cmd.Process.Pid || r.Command != "sh" || r.Note != "nightly export, ops" ||
		err != nil || started.Before(before.Truncate(time.Second)) || started.After(time.Now()) || r.TTLMs <= 0 || !r.Matches {
		t.Fatalf("record %+v (started: %v)", r, err)
	}
	for _, m := range rep.Masters {
		if m.Holder == nil || !m.Holder.Matches || m.Holder.Token != token {
			t.Errorf("%s: record %+v", m.Addr, m.Holder)
		}
	}
	text := redlockRun(t, c.nodes, "inspect", "job").stdout
	if want := fmt.Sprintf("held by pid %d on host %s, command sh (pid %d), since %s", r.PID, host, r.CommandPID, r.Started); !strings.Contains(text, want) ||
		!strings.Contains(text, `note "nightly export, ops"`) {
		t.Errorf("text, want %q:\n%s", want, text)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := run.finish(t); res.code != 0 {
		t.Fatalf("run: status %d, stderr %q", res.code, res.stderr)
	}
	if c.exists(t, "job")+c.exists(t, layout.Holder("job")) != 0 {
		t.Fatal("the lock or its record outlived the run")
	}
}

// TestInspectIgnoresAStaleRecord: a record whose token is not the lock's
// names nobody.
func TestInspectIgnoresAStaleRecord(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	lk, err := c.locker(t, redlock.Config{}).Lock(context.Background(), "k", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.onAll(t, "HSET", layout.Holder("k"), "token", "JBSWY3DPEHPK3PXPJBSWY3DPEH", "host", "elsewhere", "pid", "7")
	c.onAll(t, "PEXPIRE", layout.Holder("k"), 30000)
	rep := inspect(t, c, "k")
	if !rep.Held || rep.Holders[0].Token != lk.Token() || rep.Holders[0].Record != nil || rep.NotLock {
		t.Fatalf("%+v", rep)
	}
	for _, m := range rep.Masters {
		if m.Holder == nil || m.Holder.Matches || m.Holder.Host != "elsewhere" {
			t.Errorf("%s: record %+v", m.Addr, m.Holder)
		}
	}
	if text := redlockRun(t, c.nodes, "inspect", "k").stdout; strings.Contains(text, "held by") || !strings.Contains(text, "stale") {
		t.Errorf("text:\n%s", text)
	}
}

// TestRunWarnsWhenARenewalMissesAMaster: after a renewal that a master
// refused, run warns once, and says so once all hold the lock again.
func TestRunWarnsWhenARenewalMissesAMaster(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	dir := t.TempDir()
	tok, gate := filepath.Join(dir, "tok"), filepath.Join(dir, "gate")
	run := background(t, c.nodes, "run", "--ttl", "3s", "job", "--", "sh", "-c", holdJob(tok, gate))
	token := readToken(t, tok)
	pttl := func() int64 { return c.do(t, 1, "PTTL", "job").(int64) }
	first := pttl()
	await(t, "a renewal", func() bool { return pttl() > first })
	c.do(t, 1, "SET", "job", "JBSWY3DPEHPK3PXPJBSWY3DPEH", "KEEPTTL") // another holder's, there
	warning := fmt.Sprintf("redlock: warning: the renewal of \"job\" reached only 2 of 3 masters (quorum 2; one more failed master loses it): %s: does not hold the lock\n", c.servers[1].Addr())
	await(t, "the warning", run.errb.has(warning))
	c.do(t, 1, "SET", "job", token, "PX", 3000)
	again := "redlock: the renewals of \"job\" reach all 3 masters again\n"
	await(t, "the all-clear", run.errb.has(again))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := run.finish(t)
	if res.code != 0 || strings.Count(res.stderr, "redlock:") != 2 || strings.Count(res.stderr, warning) != 1 || strings.Count(res.stderr, again) != 1 {
		t.Fatalf("status %d, stderr %q: want the warning and the all-clear once each", res.code, res.stderr)
	}
}

func TestPrefix(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	dir := t.TempDir()
	tok, gate := filepath.Join(dir, "tok"), filepath.Join(dir, "gate")
	run := background(t, c.nodes, "run", "--prefix", "locks:", "job", "--", "sh", "-c", holdJob(tok, gate))
	token := readToken(t, tok)
	if c.exists(t, "locks:job") != 3 || c.exists(t, "job") != 0 {
		t.Fatal("run --prefix did not lock locks:job")
	}
	if rep := inspect(t, c, "job"); rep.Held {
		t.Errorf("inspect without the prefix: %+v", rep)
	}
	for _, args := range [][]string{{"--prefix", "locks:", "job"}, {"--prefix=locks:", "job"}} {
		if rep := inspect(t, c, args...); !rep.Held || rep.Prefix != "locks:" || rep.Holders[0].Token != token || rep.Holders[0].Record == nil {
			t.Errorf("inspect %v: %+v", args, rep)
		}
	}
	r := redlockRunEnv(t, c.nodes, []string{"REDLOCK_PREFIX=locks:"}, "inspect", "--json", "job")
	var rep inspectJSON
	decode(t, r.stdout, &rep)
	if !rep.Held || rep.Prefix != "locks:" {
		t.Errorf("inspect with REDLOCK_PREFIX: %+v", rep)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := run.finish(t); res.code != 0 || c.exists(t, "locks:job")+c.exists(t, layout.Holder("locks:job")) != 0 {
		t.Fatalf("run: status %d, stderr %q, or keys left", res.code, res.stderr)
	}

	lk, err := c.locker(t, redlock.Config{KeyPrefix: "app:"}).Lock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"REDLOCK_PREFIX=app:"}
	r = redlockRunEnv(t, c.nodes, env, "inspect", "--json", "--prefix=", "app:k")
	rep = inspectJSON{}
	decode(t, r.stdout, &rep)
	if !rep.Held || rep.Prefix != "" {
		t.Errorf("--prefix= over REDLOCK_PREFIX: %+v", rep)
	}
	if r := redlockRunEnv(t, c.nodes, env, "unlock", "k", "--token", lk.Token()); r.code != 0 || c.exists(t, "app:k") != 0 {
		t.Fatalf("unlock with REDLOCK_PREFIX: status %d, output %q", r.code, r.stdout)
	}
}

// TestInspectPrintsAnyMetadata: a library lock taken WithMetadata keeps a
// holder record of the caller's own fields; inspect prints every one of
// them (JSON and text) beside the holder, and unlock --token and --force
// delete the record with the lock.
func TestInspectPrintsAnyMetadata(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{})
	md := map[string]string{"request": "r-17", "owner": "billing svc", "pod": "api-7f9"}
	lk, err := l.Lock(ctx, "job", 30*time.Second, redlock.WithMetadata(md))
	if err != nil {
		t.Fatal(err)
	}
	rep := inspect(t, c, "job")
	if !rep.Held || rep.NotLock || len(rep.Holders) != 1 || rep.Holders[0].Record == nil {
		t.Fatalf("%+v", rep)
	}
	if r := rep.Holders[0].Record; r.Token != lk.Token() || !r.Matches || r.TTLMs <= 0 || !maps.Equal(r.Metadata, md) || r.Host != "" || r.PID != 0 {
		t.Fatalf("record %+v, want the metadata %v", r, md)
	}
	for _, m := range rep.Masters {
		if m.Holder == nil || !m.Holder.Matches || !maps.Equal(m.Holder.Metadata, md) {
			t.Errorf("%s: record %+v", m.Addr, m.Holder)
		}
	}
	text := redlockRun(t, c.nodes, "inspect", "job").stdout
	if want := `  metadata: owner="billing svc", pod=api-7f9, request=r-17` + "\n"; !strings.Contains(text, want) || strings.Contains(text, "held by") {
		t.Errorf("text, want %q:\n%s", want, text)
	}

	// The record as SetMetadata replaced it.
	md = map[string]string{"request": "r-18"}
	if err := lk.SetMetadata(ctx, md); err != nil {
		t.Fatal(err)
	}
	if r := inspect(t, c, "job").Holders[0].Record; r == nil || !maps.Equal(r.Metadata, md) {
		t.Fatalf("after SetMetadata: record %+v, want %v", r, md)
	}
	if r := redlockRun(t, c.nodes, "unlock", "job", "--token", lk.Token()); r.code != 0 || c.exists(t, "job")+c.exists(t, layout.Holder("job")) != 0 {
		t.Fatalf("unlock --token: status %d, output %q; or the lock or its record is left", r.code, r.stdout)
	}

	// A fenced lock's, with a record of the token only.
	fl, err := l.Lock(ctx, "job", 30*time.Second, redlock.WithFencing(true), redlock.WithMetadata(nil))
	if err != nil {
		t.Fatal(err)
	}
	rep = inspect(t, c, "job")
	if r := rep.Holders[0].Record; r == nil || r.Token != fl.Token() || len(r.Metadata) != 0 || rep.NotLock {
		t.Fatalf("record %+v, want the token's only", r)
	}
	if text := redlockRun(t, c.nodes, "inspect", "job").stdout; !strings.Contains(text, "  metadata: none") {
		t.Errorf("text:\n%s", text)
	}
	if r := redlockRun(t, c.nodes, "unlock", "job", "--force"); r.code != 0 || c.exists(t, "job")+c.exists(t, layout.Holder("job")) != 0 {
		t.Fatalf("unlock --force: status %d, output %q; or the lock or its record is left", r.code, r.stdout)
	}
	if c.exists(t, layout.Fence("job")) != 3 {
		t.Fatal("unlock --force took the fencing counter")
	}
}

// Every exclusive kind's record, and each permit's, shows beside its
// holder: a reentrant lock's under its owner (any string), a writer's, a
// permit's; none is taken for something that is not a lock, and unlock
// --token and --force delete each with its hold.
func TestInspectShowsEveryKindsRecord(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{})
	md := map[string]string{"pod": "api-7f9"}
	re, err := l.Reentrant("re", "billing job 17").Lock(ctx, 30*time.Second, redlock.WithMetadata(md))
	if err != nil {
		t.Fatal(err)
	}
	w, err := l.RWMutex("rw").Lock(ctx, 30*time.Second, redlock.WithMetadata(md))
	if err != nil {
		t.Fatal(err)
	}
	sem := l.Semaphore("sem", 3)
	p1, err := sem.Acquire(ctx, 30*time.Second, redlock.WithMetadata(md))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := sem.Acquire(ctx, 30*time.Second) // no record
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		key, kind, token string
		permit           int
	}{{"re", "reentrant", re.Token(), -1}, {"rw", "writer", w.Token(), -1}, {"sem", "permit", p1.Token(), p1.Permit()}} {
		rep := inspect(t, c, k.key)
		if rep.NotLock || !rep.Held {
			t.Fatalf("%s: %+v", k.key, rep)
		}
		found := false
		for _, h := range rep.Holders {
			if h.Kind != k.kind || h.Token != k.token {
				if h.Record != nil {
					t.Errorf("%s: %s %s has a record %+v, want none", k.key, h.Kind, h.Token, h.Record)
				}
				continue
			}
			found = true
			if r := h.Record; r == nil || r.Token != k.token || !r.Matches || !maps.Equal(r.Metadata, md) || !h.Quorum {
				t.Errorf("%s: holder %+v, record %+v; want %v", k.key, h, h.Record, md)
			}
			if k.permit >= 0 && (h.Permit == nil || *h.Permit != k.permit) {
				t.Errorf("%s: permit %v, want %d", k.key, h.Permit, k.permit)
			}
		}
		if !found {
			t.Errorf("%s: no %s %s among %+v", k.key, k.kind, k.token, rep.Holders)
		}
	}
	if text := redlockRun(t, c.nodes, "inspect", "sem").stdout; !strings.Contains(text, "  metadata: pod=api-7f9\n") {
		t.Errorf("text:\n%s", text)
	}
	permitRecord := layout.Holder(layout.Permit("sem", p1.Permit()))
	if r := redlockRun(t, c.nodes, "unlock", "sem", "--token", p1.Token()); r.code != 0 || c.exists(t, permitRecord) != 0 {
		t.Fatalf("unlock --token of a permit: status %d, output %q; or its record is left", r.code, r.stdout)
	}
	if r := redlockRun(t, c.nodes, "unlock", "re", "--token", re.Token()); r.code != 0 || c.exists(t, "re")+c.exists(t, layout.Holder("re")) != 0 {
		t.Fatalf("unlock --token of a reentrant owner: status %d, output %q; or its hash or record is left", r.code, r.stdout)
	}
	if r := redlockRun(t, c.nodes, "unlock", "rw", "--force"); r.code != 0 || c.exists(t, layout.RWKeys("rw").Writer)+c.exists(t, layout.Holder("rw")) != 0 {
		t.Fatalf("unlock --force of a writer: status %d, output %q; or the writer or its record is left", r.code, r.stdout)
	}
	if err := p2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
