package pool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// probe is the key the tests' confirmations write.
const probe = "test:{quorumlock}:probe"

// confirm runs n.Confirm under ctx and returns what it delivered.
func confirm(ctx context.Context, n *pool.Node, local bool, replicas int) (l, r int, err error) {
	type outcome struct {
		l, r int
		err  error
	}
	ch := make(chan outcome, 1)
	n.Confirm(ctx, probe, local, replicas, func(l, r int, err error) { ch <- outcome{l, r, err} })
	o := <-ch
	return o.l, o.r, o.err
}

// A confirmation made by another master process than the one that took
// the write confirms nothing: the master restarted (empty) after the
// write, and the confirmation, on a connection dialed after the restart,
// must fail with nodeutil.ErrMasterChanged, not confirm the lost write.
// The next one, asked of the new process, confirms.
func TestDurableMasterChanged(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv, n := start(t, redisproc.Options{}, cfg)
		if _, err := n.Do(t.Context(), "SET", "grant", "1"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Restart(0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := confirm(context.Background(), n, false, 0); !errors.Is(err, nodeutil.ErrMasterChanged) {
			t.Errorf("confirmation after a restart: %v, want ErrMasterChanged", err)
		}
		if _, _, err := confirm(context.Background(), n, false, 0); err != nil {
			t.Errorf("the next confirmation, asked of the new process: %v", err)
		}
	})
}

// A confirmation writes the probe key it is given (Config.KeyPrefix's, in
// the Locker), not a key of its own.
func TestConfirmWritesTheProbeItIsGiven(t *testing.T) {
	_, n := start(t, redisproc.Options{}, pool.Config{})
	if _, _, err := confirm(t.Context(), n, false, 0); err != nil {
		t.Fatalf("WAIT 0: %v", err)
	}
	if got, err := redis.Int(n.Do(t.Context(), "EXISTS", probe)); err != nil || got != 1 {
		t.Errorf("EXISTS %s = %d, %v: the probe went elsewhere", probe, got, err)
	}
}

// A durable connection that the master closed while it was idle (its
// timeout setting) is dialed anew: the next confirmation succeeds on a
// healthy master instead of failing with EOF.
func TestConfirmAfterIdleClose(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		_, n := start(t, redisproc.Options{Args: []string{"--timeout", "1"}}, cfg)
		if _, _, err := confirm(t.Context(), n, false, 0); err != nil {
			t.Fatal(err)
		}
		admin := redistestConn(t, n)
		eventually(t, func() (bool, string) {
			list, err := redis.String(admin.Do("CLIENT", "LIST"))
			return err == nil && strings.Count(list, "\n") <= 1, "the master closes the idle connections: " + list // only admin's left
		})
		if _, _, err := confirm(t.Context(), n, false, 0); err != nil {
			t.Errorf("confirmation after the master closed the idle connection: %v", err)
		}
	})
}

// WAIT and WAITAOF end a margin before the confirmation's deadline, so
// that a master without the replicas asked for answers with its counts (0
// replicas) instead of the connection timing out.
func TestConfirmRefusalReadsAsCounts(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		_, n := start(t, redisproc.Options{}, cfg)
		ctx, cancel := context.WithTimeout(t.Context(), redlock.DefaultDurableTimeout)
		defer cancel()
		_, r, err := confirm(ctx, n, false, 1)
		if err != nil || r != 0 {
			t.Errorf("WAIT 1 on a master without replicas: %d replicas, %v; want 0 and no error", r, err)
		}
	})
}

// A master whose user may not run INFO leaves the identity unknown, with
// the refusal as the reason.
func TestIdentityRefused(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv := startACL(t)
		cfg.Addr, cfg.Username, cfg.Password = srv.Addr(), "noinfo", "pw"
		n := pool.New(cfg)
		t.Cleanup(func() { n.Close() })
		if _, err := n.Do(t.Context(), "PING"); err != nil {
			t.Fatal(err)
		}
		_, err := n.Identity()
		if !errors.Is(err, redlock.ErrNoIdentity) || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("Identity of a master that refuses INFO: %v, want ErrNoIdentity with the refusal", err)
		}
	})
}

// startACL starts a master with a user "noinfo" (password "pw") that may
// run every command but INFO.
func startACL(t *testing.T) *redisproc.Server {
	t.Helper()
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	c, err := redis.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info"); err != nil {
		t.Fatal(err)
	}
	return srv
}

// redistestConn returns a plain connection to n's master, for looking at
// it from outside.
func redistestConn(t *testing.T, n *pool.Node) redis.Conn {
	t.Helper()
	c, err := redis.Dial("tcp", n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
