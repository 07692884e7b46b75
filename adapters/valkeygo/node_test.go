package valkeygo_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/adapters/valkeygo"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/valkey-io/valkey-go"
)

// What the conformance suite cannot see: New over a client of the
// caller's (its replies, and what a Locker makes of a Node that cannot
// tell which master process answers), a cluster client, Open's checks,
// credentials from AuthCredentialsFn, and durable grants on Valkey's AOF.
// The rueidis adapter's tests cover the rest of nodeutil.ClientNode
// (Sentinel, passwords, the client's own dial function, master down).

// client returns a client made with opt, closed at the end of t.
func client(t *testing.T, opt valkey.ClientOption) valkey.Client {
	t.Helper()
	c, err := valkey.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// madeBy returns a Node made by New over the caller's client c, closed at
// the end of t, before c.
func madeBy(t *testing.T, c valkey.Client) *valkeygo.Node {
	n := valkeygo.New(c)
	t.Cleanup(func() { n.Close() })
	return n
}

// opened returns a Node made by Open from opt, closed at the end of t.
func opened(t *testing.T, opt valkey.ClientOption) *valkeygo.Node {
	t.Helper()
	n, err := valkeygo.Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func TestNew(t *testing.T) {
	addr := redlocktest.NewMaster(t).Addr()
	n := madeBy(t, client(t, valkey.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableRetry: true}))
	if n.Addr() != addr {
		t.Errorf("Addr() = %q, want %q", n.Addr(), addr)
	}
	ctx := t.Context()
	if got, err := n.Do(ctx, "SET", "k", "v"); err != nil || got != "OK" {
		t.Fatalf("SET = %v, %v", got, err)
	}
	for _, tc := range []struct {
		cmd    []any
		prefix string
	}{
		{[]any{"NOSUCHCOMMAND"}, "ERR unknown command"},
		{[]any{"LPUSH", "k", "x"}, "WRONGTYPE "},
	} {
		_, err := n.Do(ctx, tc.cmd[0].(string), tc.cmd[1:]...)
		var verr *valkey.ValkeyError
		if !errors.As(err, &verr) || !strings.HasPrefix(err.Error(), tc.prefix) {
			t.Errorf("Do%v: %v, want a *valkey.ValkeyError beginning %q", tc.cmd, err, tc.prefix)
		}
	}
	// The builder's refusals are errors, not panics, and send nothing.
	var verr *valkey.ValkeyError
	if _, err := n.Do(ctx, "SUBSCRIBE", "ch"); err == nil || errors.As(err, &verr) {
		t.Errorf("Do(SUBSCRIBE): %v, want a non-reply error", err)
	}
}

// New's Node cannot see its client's connections: redlock.New refuses it
// under the default Config (the restart guard on), saying which Node, and
// with Durability; its Identity says to use Open. Over masters whose
// restarts lose nothing (appendfsync always, declared with FsyncAlways) it
// locks.
func TestNewNeedsGuardOff(t *testing.T) {
	n := madeBy(t, client(t, valkey.ClientOption{InitAddress: []string{redlocktest.NewMaster(t).Addr()}, ForceSingleClient: true, DisableRetry: true}))
	_, err := redlock.New([]redlock.Node{n}, redlock.Config{})
	if !errors.Is(err, redlock.ErrInvalid) || !strings.Contains(err.Error(), "valkeygo.Node") {
		t.Errorf("redlock.New over New's Node with the default Config: %v, want ErrInvalid naming the Node", err)
	}
	if _, err := redlock.New([]redlock.Node{n}, redlock.Config{FsyncAlways: true, Durability: redlock.Durability{Local: true}}); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("redlock.New over New's Node with Durability: %v, want ErrInvalid", err)
	}
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) || !strings.Contains(err.Error(), "make it with Open") {
		t.Errorf("Identity: %v, want ErrNoIdentity saying to use Open", err)
	}
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{FsyncAlways: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Do(t.Context(), "job", 10*time.Second, func(context.Context) error { return nil }); err != nil {
		t.Errorf("a job under a lock with FsyncAlways: %v", err)
	}
}

// A whole cluster is one master: a lock's keys share a hash tag. It has no
// one master process, so the restart guard cannot apply to it: through
// New, redlock.New refuses it; through Open, the guard refuses its
// grants, saying why. With the guard off, both lock.
func TestClusterClient(t *testing.T) {
	addr := redlocktest.NewClusterMaster(t).Addr()
	made := madeBy(t, client(t, valkey.ClientOption{InitAddress: []string{addr}, DisableRetry: true}))
	if want := "cluster:" + addr; made.Addr() != want {
		t.Errorf("Addr() = %q, want %q", made.Addr(), want)
	}
	ctx := t.Context()
	if _, err := made.Eval(ctx, "x", "return 1", []string{"a", "b"}); err == nil {
		t.Error("Eval with keys in two slots on a cluster: no error")
	}
	open := opened(t, valkey.ClientOption{InitAddress: []string{addr}})
	guarded, err := redlock.New([]redlock.Node{open}, redlock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := guarded.TryLock(ctx, "job", 10*time.Second); !errors.Is(err, redlock.ErrInvalid) || !strings.Contains(err.Error(), "Cluster") {
		t.Errorf("TryLock with the guard on, over a cluster: %v, want ErrInvalid saying it is a cluster", err)
	}
	for _, n := range []*valkeygo.Node{made, open} {
		released := make(chan struct{}, 1)
		unsubscribe, err := n.Subscribe(ctx, redlock.ReleaseChannel("job"), released)
		if err != nil {
			t.Fatal(err)
		}
		l, err := redlock.New([]redlock.Node{n}, redlock.Config{Fencing: true, RestartGuard: -1})
		if err == nil {
			err = l.Do(ctx, "job", 10*time.Second, func(context.Context) error { return nil })
		}
		if err != nil {
			t.Fatalf("%s, the guard off: %v", n.Addr(), err)
		}
		<-released // announced through the cluster's pub/sub
		unsubscribe()
	}
}

// Open refuses the options under which a lock command could be sent twice
// or to a replica, and names a Sentinel client's Node after its master set.
func TestOpenChecksOptions(t *testing.T) {
	unsafe := []valkey.ClientOption{
		{ConnLifetime: time.Minute},
		{ReplicaOnly: true},
		{SendToReplicas: func(valkey.Completed) bool { return true }},
	}
	for i := range unsafe {
		unsafe[i].InitAddress = []string{"127.0.0.1:1"}
		if _, err := valkeygo.Open(unsafe[i]); !errors.Is(err, valkeygo.ErrUnsafeOption) || !strings.HasPrefix(err.Error(), "valkeygo: ") {
			t.Errorf("Open with unsafe option %d: %v, want valkeygo's ErrUnsafeOption", i, err)
		}
	}
	if n, err := valkeygo.Open(valkey.ClientOption{}); err == nil {
		n.Close()
		t.Error("Open without an address: no error")
	}
	if n, want := opened(t, valkey.ClientOption{InitAddress: []string{"s:1"}, Sentinel: valkey.SentinelOption{MasterSet: "m"}}), "sentinel:m@s:1"; n.Addr() != want {
		t.Errorf("Addr() = %q, want %q", n.Addr(), want)
	}
}

// Open authenticates its reading of the identity with the credentials
// that AuthCredentialsFn gives for the connection's address, as valkey-go
// does for its own set-up.
func TestOpenAuthCredentialsFn(t *testing.T) {
	s := redistest.Start(t, 1, redisproc.Options{Password: "from-a-vault"})[0]
	var asked []string
	n := opened(t, valkey.ClientOption{
		InitAddress:       []string{s.Addr()},
		ForceSingleClient: true,
		DisableCache:      true,
		AuthCredentialsFn: func(c valkey.AuthCredentialsContext) (valkey.AuthCredentials, error) {
			asked = append(asked, c.Address.String())
			return valkey.AuthCredentials{Password: "from-a-vault"}, nil
		},
	})
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Do(t.Context(), "job", 10*time.Second, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("a job under a lock, the guard on: %v", err)
	}
	if id, err := n.Identity(); err != nil || id.RunID == "" {
		t.Errorf("Identity = %+v, %v", id, err)
	}
	if len(asked) == 0 || asked[0] != s.Addr() {
		t.Errorf("AuthCredentialsFn was asked for %v, want %s first", asked, s.Addr())
	}
}

// With Durability{Local: true} a grant counts once Valkey's AOF holds it
// (WAITAOF); the Node's Identity says the master keeps an AOF. Redis 7.0
// has no WAITAOF: the test needs valkey-server.
func TestDurableLocalOnValkey(t *testing.T) {
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Skip("valkey-server not on PATH (scripts/ensure-valkey.sh)")
	}
	s := redistest.Start(t, 1, redisproc.Options{Binary: bin, Args: []string{"--appendonly", "yes", "--appendfsync", "everysec"}})[0]
	n := opened(t, valkey.ClientOption{InitAddress: []string{s.Addr()}, ForceSingleClient: true, DisableCache: true})
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{Durability: redlock.Durability{Local: true}})
	if err == nil {
		err = l.Do(t.Context(), "job", 10*time.Second, func(context.Context) error { return nil })
	}
	if err != nil {
		t.Fatalf("a job under a durable grant on Valkey with AOF: %v", err)
	}
	if id, err := n.Identity(); err != nil || !id.AppendOnly || id.AppendFsync != "everysec" || id.PersistsEveryWrite() {
		t.Errorf("Identity = %+v, %v; want AOF on, appendfsync everysec", id, err)
	}
}
