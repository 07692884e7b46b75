package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// durableCluster starts n masters with opts and returns them with a
// pool.Node each.
func durableCluster(t *testing.T, n int, opts redisproc.Options) ([]*redisproc.Server, []*pool.Node) {
	t.Helper()
	return guardCluster(t, n, opts)
}

// valkey returns the valkey-server binary, skipping the test without one
// (scripts/ensure-valkey.sh installs it).
func valkey(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Skip("valkey-server not on PATH (scripts/ensure-valkey.sh installs it): WAITAOF needs Valkey or Redis 7.2+")
	}
	return path
}

// A master that cannot confirm durability (no AOF; a server without
// WAITAOF; appendfsync no, under which WAITAOF would confirm writes never
// fsynced) gives a clear error that matches ErrInvalid (a
// misconfiguration) and never ErrUnavailable, so that code that runs
// anyway when Redis is down does not run unlocked for it; never a silent
// plain grant; and the failed attempt leaves no key. (Before, these read
// as masters failing: ErrUnavailable.)
func TestDurableGrantsRefusedWhereUnconfirmable(t *testing.T) {
	cases := []struct {
		name string
		opts redisproc.Options
		why  string
	}{
		{"no AOF", redisproc.Options{}, "appendonly no"},
	}
	if out, _ := exec.Command(redisproc.DefaultBinary(), "--version").Output(); strings.Contains(string(out), "v=7.0") || strings.Contains(string(out), "v=7.1") {
		cases = append(cases, struct {
			name string
			opts redisproc.Options
			why  string
		}{"no WAITAOF", redisproc.Options{AppendOnly: true}, "WAITAOF"})
	}
	if bin, err := exec.LookPath("valkey-server"); err == nil {
		cases = append(cases, struct {
			name string
			opts redisproc.Options
			why  string
		}{"appendfsync no", redisproc.Options{Binary: bin, Args: []string{"--appendonly", "yes", "--appendfsync", "no"}}, "appendfsync no"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, nodes := durableCluster(t, 3, c.opts)
			l := newLocker(t, asNodes(nodes), redlock.Config{Durability: redlock.Durability{Local: true}})
			_, err := l.TryLock(t.Context(), "k", 10*time.Second)
			if !errors.Is(err, redlock.ErrNotDurable) || !errors.Is(err, redlock.ErrNotAcquired) || !errors.Is(err, redlock.ErrInvalid) || errors.Is(err, redlock.ErrUnavailable) {
				t.Fatalf("durable grants (%s): %v, want ErrNotDurable and ErrInvalid, not ErrUnavailable", c.name, err)
			}
			if !strings.Contains(err.Error(), c.why) {
				t.Errorf("the error does not say why (%q): %v", c.why, err)
			}
			awaitValues(t, nodes, "k", repeat("", 3)...)
		})
	}
	if _, err := redlock.New([]redlock.Node{fakeNode{}}, redlock.Config{Durability: redlock.Durability{Local: true}}); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("New with a Node that cannot confirm: %v, want ErrInvalid", err)
	}
}

// fakeNode is a Node without the DurableNode ability.
type fakeNode struct{}

func (fakeNode) Addr() string { return "fake" }
func (fakeNode) Do(context.Context, string, ...any) (any, error) {
	return nil, errors.New("fake")
}
func (fakeNode) Eval(context.Context, string, string, []string, ...any) (any, error) {
	return nil, errors.New("fake")
}

// On Valkey with AOF and appendfsync everysec, durable grants succeed, and
// concurrent grants share their fsyncs: 32 locks at once cost far fewer
// WAITAOFs than locks.
func TestDurableGrantsGroupCommit(t *testing.T) {
	bin := valkey(t)
	_, nodes := durableCluster(t, 3, redisproc.Options{Binary: bin, Args: []string{"--appendonly", "yes", "--appendfsync", "everysec"}})
	l := newLocker(t, asNodes(nodes), redlock.Config{Durability: redlock.Durability{Local: true}})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			lk, err := l.TryLock(t.Context(), fmt.Sprint("k", i), 10*time.Second)
			if err != nil {
				errs <- err
				return
			}
			errs <- lk.Unlock(t.Context())
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := redis.Dial("tcp", nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stats, err := redis.String(c.Do("INFO", "commandstats"))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for line := range strings.Lines(stats) {
		if rest, ok := strings.CutPrefix(line, "cmdstat_waitaof:calls="); ok {
			fmt.Sscanf(rest, "%d", &calls)
		}
	}
	if calls == 0 || calls >= 32 {
		t.Fatalf("%d WAITAOFs for 32 durable grants on one master, want between 1 and 31 (group commit)", calls)
	}
	t.Logf("%d WAITAOFs for 32 durable grants", calls)
}

// Replicas: a grant counts only once the master's replicas acknowledged
// it; a master without the replicas asked for grants nothing.
func TestDurableGrantsReplicas(t *testing.T) {
	// The replica's first sync starts at once, not after the master's 5s
	// wait for more replicas to share a diskless transfer.
	servers, nodes := durableCluster(t, 1, redisproc.Options{Args: []string{"--repl-diskless-sync-delay", "0"}})
	l := newLocker(t, asNodes(nodes), redlock.Config{Durability: redlock.Durability{Replicas: 1, Timeout: 300 * time.Millisecond}})
	if _, err := l.TryLock(t.Context(), "k", 10*time.Second); !errors.Is(err, redlock.ErrNotDurable) {
		t.Fatalf("a master without replicas: %v, want ErrNotDurable", err)
	}
	host, port, _ := strings.Cut(servers[0].Addr(), ":")
	redistest.Start(t, 1, redisproc.Options{Args: []string{"--replicaof", host, port}})
	await(t, "a grant acknowledged by the replica", func() bool {
		lk, err := l.TryLock(t.Context(), "k2", 10*time.Second)
		if err == nil {
			lk.Unlock(t.Context())
		}
		return err == nil
	})
}
