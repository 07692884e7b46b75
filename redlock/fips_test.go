package redlock_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// The quick start runs under GODEBUG=fips140=only: the library computes no
// SHA-1 when it starts (script digests are made at build time) nor later.
// The test runs itself again in a child process with that setting, which
// locks, extends and unlocks on three real masters, fenced and plain.
func TestFIPSOnly(t *testing.T) {
	if addrs := os.Getenv("QUORUMLOCK_FIPS_CHILD"); addrs != "" {
		fipsQuickStart(t, strings.Split(addrs, ","))
		return
	}
	servers := redistest.Start(t, 3, redisproc.Options{})
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.Addr())
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestFIPSOnly$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "GODEBUG=fips140=only", "QUORUMLOCK_FIPS_CHILD="+strings.Join(addrs, ","))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the quick start under GODEBUG=fips140=only: %v\n%s", err, out)
	}
}

func fipsQuickStart(t *testing.T, addrs []string) {
	var nodes []redlock.Node
	for _, addr := range addrs {
		n := pool.New(pool.Config{Addr: addr})
		defer n.Close()
		nodes = append(nodes, n)
	}
	for _, cfg := range []redlock.Config{{}, {Fencing: true, AutoRenew: true}} {
		locker, err := redlock.New(nodes, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		lk, err := locker.Lock(ctx, "invoice:42", 10*time.Second)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if err := lk.Extend(ctx, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := lk.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
}
