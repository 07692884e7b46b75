package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

type unlockJSON struct {
	Key       string
	Prefix    string
	Force     bool
	Refused   bool
	RemovedOn int `json:"removed_on"`
	Masters   []struct {
		Addr    string
		Removed []string
		Refused []struct{ Key, Reason string }
	}
}

func (c *cluster) exists(t *testing.T, key string) int {
	t.Helper()
	n := 0
	for i := range c.servers {
		n += int(c.do(t, i, "EXISTS", key).(int64))
	}
	return n
}

func TestUnlockToken(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{})
	lk, err := l.Lock(ctx, "job", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := redlockRun(t, c.nodes, "unlock", "job", "--token", "not-the-token"); r.code != 1 || c.exists(t, "job") != 3 {
		t.Fatalf("a wrong token: status %d, output %q", r.code, r.stdout)
	}
	r := redlockRun(t, c.nodes, "unlock", "--json", "job", "--token", lk.Token())
	var rep unlockJSON
	decode(t, r.stdout, &rep)
	if r.code != 0 || rep.RemovedOn != 3 || rep.Force || rep.Masters[0].Removed[0] != "lock" || c.exists(t, "job") != 0 {
		t.Fatalf("status %d, %+v", r.code, rep)
	}
	if err := lk.Extend(ctx, 30*time.Second); err == nil {
		t.Fatal("the holder can still extend a lock that unlock released")
	}

	for range 2 {
		if _, err := l.Reentrant("re", "job-7").Lock(ctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	r = redlockRun(t, c.nodes, "unlock", "re", "--token", "job-7")
	if r.code != 0 || !strings.Contains(r.stdout, "released reentrant") || c.exists(t, "re") != 0 {
		t.Fatalf("reentrant owner: status %d, output %q", r.code, r.stdout)
	}
}

func TestUnlockForce(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{Fencing: true})
	if _, err := l.Lock(ctx, "job", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RWMutex("job").RLock(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	r := redlockRun(t, c.nodes, "unlock", "job", "--force", "--json")
	var rep unlockJSON
	decode(t, r.stdout, &rep)
	if r.code != 0 || !rep.Force || rep.RemovedOn != 3 {
		t.Fatalf("status %d, %+v", r.code, rep)
	}
	for _, m := range rep.Masters {
		if strings.Join(m.Removed, " ") != "job {job}:r" {
			t.Errorf("%s: removed %q, want the lock and the readers", m.Addr, m.Removed)
		}
	}
	if c.exists(t, "job")+c.exists(t, "{job}:r") != 0 {
		t.Fatal("lock keys left behind")
	}
	if c.exists(t, "{job}:fence") != 3 {
		t.Fatal("--force removed the fencing counter")
	}
	if r := redlockRun(t, c.nodes, "unlock", "job", "--force"); r.code != 1 || !strings.Contains(r.stdout, "nothing to remove") {
		t.Fatalf("nothing held: status %d, output %q", r.code, r.stdout)
	}
	if _, err := l.Reentrant("re", "job-7").Lock(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := redlockRun(t, c.nodes, "unlock", "re", "--force"); r.code != 0 || c.exists(t, "re") != 0 {
		t.Fatalf("a reentrant lock: status %d, output %q", r.code, r.stdout)
	}
}
