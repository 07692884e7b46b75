package rueidis_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/redis/rueidis"
)

// What each constructor can tell of the master's process, and what a
// Locker with the default Config (the restart guard on) makes of it.

// runID reads the run id of the server at addr (with password, if set).
func runID(t *testing.T, addr, password string) string {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, Password: password, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Do(t.Context(), c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	return nodeutil.InfoField(info, "run_id")
}

// lockOnce takes a lock through nodes with the default Config, and
// releases it.
func lockOnce(t *testing.T, nodes ...redlock.Node) error {
	t.Helper()
	l, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		return err
	}
	defer l.Close(context.Background())
	lk, err := l.TryLock(t.Context(), "job", 10*time.Second)
	if err != nil {
		return err
	}
	return lk.Unlock(t.Context())
}

// A Node made by New cannot see its client's connections: Identity says
// to use Open, Identity and Confirm are not among its Abilities, and
// redlock.New refuses it while the restart guard is on, or with
// Durability; with the guard off, it locks.
func TestNewKnowsNoProcess(t *testing.T) {
	n := newNode(t, redlocktest.NewMaster(t).Addr())
	if _, err := n.Do(t.Context(), "PING"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) || !strings.Contains(err.Error(), "Open") {
		t.Errorf("Identity of New's Node: %v, want ErrNoIdentity saying to use Open", err)
	}
	if ab := n.Abilities(); ab.Identity != nil || ab.Confirm != nil || ab.EvalPrepared == nil || ab.Subscribe == nil {
		t.Errorf("New's Node's Abilities: Identity %t, Confirm %t, EvalPrepared %t, Subscribe %t; want only the last two",
			ab.Identity != nil, ab.Confirm != nil, ab.EvalPrepared != nil, ab.Subscribe != nil)
	}
	for _, cfg := range []redlock.Config{{}, {RestartGuard: -1, Durability: redlock.Durability{Replicas: 1}}} {
		if _, err := redlock.New([]redlock.Node{n}, cfg); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("redlock.New(%+v) over New's Node: %v, want ErrInvalid", cfg, err)
		}
	}
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{RestartGuard: -1})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := l.TryLock(t.Context(), "job", 10*time.Second)
	if err != nil {
		t.Fatalf("TryLock with the guard off: %v", err)
	}
	lk.Unlock(t.Context())
}

// Open reads the identity after authenticating with the options'
// password, on connections dialed by the options' own DialCtxFn.
func TestOpenAuthAndDial(t *testing.T) {
	const password = "master-secret"
	s := redistest.Start(t, 1, redisproc.Options{Password: password})[0]
	var dials atomic.Int32
	n, err := rueidisnode.Open(rueidis.ClientOption{
		InitAddress:       []string{s.Addr()},
		Password:          password,
		ForceSingleClient: true,
		DisableCache:      true,
		DialCtxFn: func(ctx context.Context, dst string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, "tcp", dst)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := lockOnce(t, n); err != nil {
		t.Fatalf("a lock with the guard on: %v", err)
	}
	if id, err := n.Identity(); err != nil || id.RunID != runID(t, s.Addr(), password) {
		t.Errorf("Identity = %+v, %v; want the master's run id", id, err)
	}
	if dials.Load() == 0 {
		t.Error("the options' DialCtxFn was never called")
	}
}

// A wrong password fails the connection, with the master's refusal: the
// identity is not read without it.
func TestOpenWrongPassword(t *testing.T) {
	s := redistest.Start(t, 1, redisproc.Options{Password: "right"})[0]
	n, err := rueidisnode.Open(rueidis.ClientOption{InitAddress: []string{s.Addr()}, Password: "wrong", ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := n.Do(ctx, "PING"); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("PING with a wrong password: %v, want the master's WRONGPASS", err)
	}
}

// A Sentinel client's Node knows the master's process, not the Sentinel's:
// the connections to the Sentinel, which takes a password of its own, are
// left alone (the master's would be refused there), and the master's are
// read after AUTH with the master's password.
func TestOpenSentinel(t *testing.T) {
	const masterPassword, sentinelPassword = "master-secret", "sentinel-secret"
	m := redistest.Start(t, 1, redisproc.Options{Password: masterPassword})[0]
	sentinel := startSentinel(t, "locks", m.Addr(), masterPassword, sentinelPassword)
	n, err := rueidisnode.Open(rueidis.ClientOption{
		InitAddress:  []string{sentinel},
		Password:     masterPassword,
		Sentinel:     rueidis.SentinelOption{MasterSet: "locks", Password: sentinelPassword},
		DisableCache: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if want := "sentinel:locks@" + sentinel; n.Addr() != want {
		t.Errorf("Addr() = %q, want %q", n.Addr(), want)
	}
	if err := lockOnce(t, n); err != nil {
		t.Fatalf("a lock with the guard on, through a Sentinel: %v", err)
	}
	id, err := n.Identity()
	if want := runID(t, m.Addr(), masterPassword); err != nil || id.RunID != want {
		t.Errorf("Identity = %+v, %v; want the master's run id %s", id, err, want)
	}
	if id.RunID == runID(t, sentinel, sentinelPassword) {
		t.Error("Identity names the Sentinel")
	}
	if got := confirmed(n); got != nil {
		t.Errorf("a confirmation through a Sentinel client: %v", got)
	}
}

// confirmed runs one confirmation of no replica through n.
func confirmed(n *rueidisnode.Node) error {
	errc := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.Confirm(ctx, "probe", false, 0, func(_, _ int, err error) { errc <- err })
	return <-errc
}

// startSentinel starts a Sentinel (the server binary with --sentinel)
// that watches the master at master as name, with the master's password,
// and requires password of its clients; it returns its address once it
// answers, and stops it when t ends.
func startSentinel(t *testing.T, name, master, masterPassword, password string) string {
	t.Helper()
	port, err := redisproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	host, mport, _ := net.SplitHostPort(master)
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nrequirepass %s\nsentinel monitor %s %s %s 1\nsentinel auth-pass %s %s\n",
		port, dir, password, name, host, mport, name, masterPassword)
	file := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(redisproc.DefaultBinary(), file, "--sentinel")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a Sentinel: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, Password: password, ForceSingleClient: true, DisableCache: true})
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinel at %s does not answer: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A Redis Cluster is many master processes: a Node opened over one knows
// no identity and confirms nothing, so a Locker with the guard on refuses
// its grants, saying why; opened over several seed addresses, the Node has
// neither ability, and redlock.New refuses it.
func TestOpenCluster(t *testing.T) {
	addr := redlocktest.NewClusterMaster(t).Addr()
	n, err := rueidisnode.Open(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Do(t.Context(), "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) || !strings.Contains(err.Error(), "Cluster") {
		t.Errorf("Identity over a cluster: %v, want ErrNoIdentity saying it is a cluster", err)
	}
	if err := confirmed(n); err == nil {
		t.Error("a confirmation over a cluster succeeded")
	}
	if err := lockOnce(t, n); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("a lock with the guard on over a cluster: %v, want ErrInvalid", err)
	}

	seeds, err := rueidisnode.Open(rueidis.ClientOption{InitAddress: []string{addr, "127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer seeds.Close()
	if ab := seeds.Abilities(); ab.Identity != nil || ab.Confirm != nil {
		t.Error("a Node over several seeds has Identity or Confirm")
	}
	if _, err := redlock.New([]redlock.Node{seeds}, redlock.Config{}); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("redlock.New over several seeds: %v, want ErrInvalid", err)
	}
}
