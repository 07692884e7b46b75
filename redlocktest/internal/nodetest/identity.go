package nodetest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
)

// runID is the master's run id as INFO server names it on c, "" when it
// names none or refuses INFO server (an in-memory master).
func (c *control) runID() string {
	info, _ := redis.String(c.c.Do("INFO", "server"))
	return nodeutil.InfoField(info, "run_id")
}

// testIdentity checks Abilities.Identity, when the Node has it: once a
// call got the master's reply, Identity knows the master's process as INFO
// describes it (run id, start, version, persistence); after the master
// restarted, the first call that gets a reply comes with the new process
// known; Identity never blocks, also before any call.
func (s *suite) testIdentity(t *testing.T) {
	n := s.node(t, 1)
	identity := redlock.AbilitiesOf(n).Identity
	if identity == nil {
		t.Skip("the Node has no Abilities.Identity: a Locker needs the restart guard off to use it")
	}
	c := s.control(t, 1)
	if c.runID() == "" {
		t.Skipf("%s names no run_id in INFO server", s.b.Name)
	}
	returnsWithin(t, Bound, "Identity before any call", func() {
		if _, err := identity(); err != nil && !errors.Is(err, redlock.ErrNoIdentity) {
			t.Errorf("Identity before any call: %v, want nil or an error matching redlock.ErrNoIdentity", err)
		}
	})
	if _, err := n.Do(ctx(t), "PING"); err != nil {
		t.Fatal(err)
	}
	s.checkIdentity(t, c, identity, "after the first call")

	if err := s.masters[1].Restart(); errors.Is(err, ErrUnsupported) {
		t.Skipf("%s cannot restart a master", s.b.Name)
	} else if err != nil {
		t.Fatal(err)
	}
	c = s.control(t, 1)
	// The connections the Node had are gone with the old process: a call
	// may fail, until one gets the new process's reply. That reply
	// counts only if Identity knows who gave it.
	for _, call := range []struct {
		name string
		do   func(context.Context) error
	}{
		{"Do", func(ctx context.Context) error { _, err := n.Do(ctx, "PING"); return err }},
		{"Eval", func(ctx context.Context) error {
			_, err := n.Eval(ctx, hashOf("return 1"), "return 1", nil)
			return err
		}},
	} {
		eventually(t, "a "+call.name+" after the restart gets a reply", func() bool {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			return call.do(cctx) == nil
		})
		s.checkIdentity(t, c, identity, "after the restart, once a "+call.name+" got a reply")
	}
}

// checkIdentity checks that identity knows the process that c's master
// runs now.
func (s *suite) checkIdentity(t *testing.T, c *control, identity func() (redlock.Identity, error), when string) {
	t.Helper()
	id, err := identity()
	if err != nil {
		t.Fatalf("Identity %s: %v", when, err)
	}
	server := c.str("INFO", "server")
	uptime, _ := strconv.Atoi(nodeutil.InfoField(server, "uptime_in_seconds"))
	var fsync string
	if vs, err := redis.Strings(c.do("CONFIG", "GET", "appendfsync"), nil); err == nil && len(vs) == 2 {
		fsync = vs[1]
	}
	now := time.Now()
	switch {
	case id.RunID != nodeutil.InfoField(server, "run_id"):
		t.Errorf("Identity %s: run id %q, INFO names %q", when, id.RunID, nodeutil.InfoField(server, "run_id"))
	case id.Version != nodeutil.InfoField(server, "redis_version"):
		t.Errorf("Identity %s: version %q, INFO names %q", when, id.Version, nodeutil.InfoField(server, "redis_version"))
	case id.Started.After(now.Add(time.Second)) || id.Started.Before(now.Add(-time.Duration(uptime+2)*time.Second)):
		// Uptime counts whole seconds: Started is the latest the
		// process can have started, up to a second after now less the
		// uptime.
		t.Errorf("Identity %s: started %v ago, INFO says up %ds", when, now.Sub(id.Started), uptime)
	case id.AppendOnly != (nodeutil.InfoField(c.str("INFO", "persistence"), "aof_enabled") == "1") || id.AppendFsync != fsync:
		t.Errorf("Identity %s: append only %t, appendfsync %q; the master says aof_enabled %s, appendfsync %q",
			when, id.AppendOnly, id.AppendFsync, nodeutil.InfoField(c.str("INFO", "persistence"), "aof_enabled"), fsync)
	}
}

// confirmed is what a Confirm delivered.
type confirmed struct {
	local, replicas int
	err             error
}

// confirm runs Abilities.Confirm and waits for what it delivers.
// timeout bounds it: WAIT for a replica that is not there waits that long.
func confirm(t *testing.T, f func(context.Context, string, bool, int, func(int, int, error)), probe string, local bool, replicas int, timeout time.Duration) confirmed {
	t.Helper()
	cctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ch := make(chan confirmed, 1)
	returnsWithin(t, Bound, "Confirm", func() {
		f(cctx, probe, local, replicas, func(l, r int, err error) { ch <- confirmed{l, r, err} })
	})
	select {
	case c := <-ch:
		return c
	case <-time.After(patience):
		t.Fatalf("Confirm did not deliver within %v", patience)
		return confirmed{}
	}
}

// testConfirm checks Abilities.Confirm, when the Node has it: it writes the
// probe key it is given and returns the counts the master acknowledged
// (WAIT: no replica; WAITAOF without AOF is an error, never a count); a
// confirmation made by another master process than the one Identity knew
// when it was asked for (the master restarted in between) fails with
// nodeutil.ErrMasterChanged, and the next one, asked of the new process,
// succeeds.
func (s *suite) testConfirm(t *testing.T) {
	n := s.node(t, 2)
	ab := redlock.AbilitiesOf(n)
	if ab.Confirm == nil {
		t.Skip("the Node has no Abilities.Confirm: a Locker with Config.Durability refuses it")
	}
	c := s.control(t, 2)
	if _, err := n.Do(ctx(t), "PING"); err != nil {
		t.Fatal(err)
	}
	probe := key(t)
	if got := confirm(t, ab.Confirm, probe, false, 0, patience); got.err != nil || got.local != 0 || got.replicas != 0 {
		t.Fatalf("Confirm of 0 replicas: %+v, want 0 local and 0 replicas", got)
	}
	if c.int("EXISTS", probe) != 1 {
		t.Errorf("Confirm did not write its probe %s", probe)
	}
	if got := confirm(t, ab.Confirm, probe, false, 1, 500*time.Millisecond); got.err != nil || got.replicas != 0 {
		t.Errorf("Confirm of 1 replica on a master without one: %+v, want 0 replicas", got)
	}
	if info, _ := redis.String(c.c.Do("INFO", "persistence")); nodeutil.InfoField(info, "aof_enabled") == "0" {
		if got := confirm(t, ab.Confirm, probe, true, 0, patience); got.err == nil {
			t.Errorf("Confirm of the local AOF on a master without AOF: %+v, want an error", got)
		}
	}

	if c.runID() == "" || ab.Identity == nil {
		t.Skipf("%s names no run_id in INFO server, or the Node has no Identity: no master change to see", s.b.Name)
	}
	before, err := ab.Identity()
	if err != nil {
		t.Fatalf("Identity after a call: %v", err)
	}
	if err := s.masters[2].Restart(); errors.Is(err, ErrUnsupported) {
		t.Skipf("%s cannot restart a master", s.b.Name)
	} else if err != nil {
		t.Fatal(err)
	}
	if now, _ := ab.Identity(); now.RunID != before.RunID {
		t.Skip("the Node connected to the restarted master by itself: Confirm is asked of the new process")
	}
	if got := confirm(t, ab.Confirm, probe, false, 0, patience); !errors.Is(got.err, nodeutil.ErrMasterChanged) {
		t.Errorf("a confirmation asked of the process before a restart: %+v, want an error matching nodeutil.ErrMasterChanged", got)
	}
	if got := confirm(t, ab.Confirm, probe, false, 0, patience); got.err != nil {
		t.Errorf("the next confirmation, asked of the new process: %+v", got)
	}
}
