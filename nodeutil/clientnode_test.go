package nodeutil_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
)

// What OpenClientNode does before its client does anything: it reads and
// checks the options, and its DialCtxFn reads the master's identity on the
// connections the client dials. The adapters' tests run it with the real
// libraries; here a fake library's NewClient dials with the DialCtxFn it
// is given, as rueidis does, so that each case is one dial of the test's
// choosing, against a real redis-server.

// fakeOption has the fields of a rueidis ClientOption that Open reads.
type fakeOption struct {
	InitAddress       []string
	Sentinel          struct{ MasterSet string }
	ConnLifetime      time.Duration
	ReplicaOnly       bool
	SendToReplicas    func(fakeCmd) bool
	DialCtxFn         func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error)
	DialFn            func(string, *net.Dialer, *tls.Config) (net.Conn, error)
	AuthCredentialsFn func(fakeAuthContext) (fakeAuth, error)
	Username          string
	Password          string
	DisableRetry      bool
}

type (
	fakeAuthContext struct{ Address net.Addr }
	fakeAuth        struct{ Username, Password string }
)

// fakeLibrary is a client library whose NewClient hands the options it
// gets to the test, which dials with them.
type fakeLibrary struct {
	mu   sync.Mutex
	opts []fakeOption
}

func (l *fakeLibrary) NewClient(opt fakeOption) (fakeClient, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opts = append(l.opts, opt)
	return fakeClient{}, nil
}

// option returns the options of the last client made.
func (l *fakeLibrary) option(t *testing.T) fakeOption {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.opts) == 0 {
		t.Fatal("no client was made")
	}
	return l.opts[len(l.opts)-1]
}

// The fake library's types: enough to be a ClientNode's, none of it used.
type (
	fakeCmd      []string
	fakeResult   struct{}
	fakeArb      []string
	fakeChannels struct{}
	fakeBuilder  struct{}
	fakeClient   struct{}
	fakeMode     string
)

var errFake = errors.New("the fake library sends nothing")

func (fakeResult) ToAny() (any, error)          { return nil, errFake }
func (fakeResult) ToString() (string, error)    { return "", errFake }
func (fakeResult) AsInt64() (int64, error)      { return 0, errFake }
func (fakeResult) AsIntSlice() ([]int64, error) { return nil, errFake }
func (fakeResult) Error() error                 { return errFake }

func (a fakeArb) Keys(k ...string) fakeArb                { return append(a, k...) }
func (a fakeArb) Args(k ...string) fakeArb                { return append(a, k...) }
func (a fakeArb) Build() fakeCmd                          { return fakeCmd(a) }
func (fakeChannels) Channel(ch ...string) fakeArb         { return ch }
func (fakeBuilder) Arbitrary(t ...string) fakeArb         { return t }
func (fakeBuilder) Subscribe() fakeChannels               { return fakeChannels{} }
func (fakeBuilder) Unsubscribe() fakeChannels             { return fakeChannels{} }
func (fakeClient) B() fakeBuilder                         { return fakeBuilder{} }
func (fakeClient) Do(context.Context, fakeCmd) fakeResult { return fakeResult{} }
func (fakeClient) DoMulti(_ context.Context, cmds ...fakeCmd) []fakeResult {
	return make([]fakeResult, len(cmds))
}
func (fakeClient) Dedicated(fn func(fakeClient) error) error { return fn(fakeClient{}) }
func (fakeClient) Dedicate() (fakeClient, func())            { return fakeClient{}, func() {} }
func (c fakeClient) Nodes() map[string]fakeClient            { return map[string]fakeClient{"fake": c} }
func (fakeClient) Mode() fakeMode                            { return "standalone" }
func (fakeClient) Close()                                    {}

func fakeHooks(fakeClient, func(string), func(string, string)) <-chan error { return nil }

// fakeNode is an adapter's Node over the fake library.
type fakeNode struct {
	*nodeutil.ClientNode[fakeClient]
}

// open opens a fakeNode and makes its client (its first call fails: the
// fake library sends nothing); it closes at the end of t.
func open(t *testing.T, lib *fakeLibrary, opt fakeOption) *fakeNode {
	t.Helper()
	n, err := nodeutil.OpenClientNode[fakeNode]("fake", opt, lib.NewClient, fakeHooks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	n.Do(t.Context(), "PING")
	return n
}

func TestOpenClientNodeChecksOptions(t *testing.T) {
	var lib fakeLibrary
	for name, opt := range map[string]fakeOption{
		"conn lifetime":    {ConnLifetime: time.Minute},
		"replica only":     {ReplicaOnly: true},
		"send to replicas": {SendToReplicas: func(fakeCmd) bool { return true }},
	} {
		opt.InitAddress = []string{"127.0.0.1:1"}
		if _, err := nodeutil.OpenClientNode[fakeNode]("fake", opt, lib.NewClient, fakeHooks); !errors.Is(err, nodeutil.ErrUnsafeOption) || !strings.HasPrefix(err.Error(), "fake: Open: ") {
			t.Errorf("Open with %s: %v, want ErrUnsafeOption prefixed with the adapter's name", name, err)
		}
	}
	// A library whose options lack a field that Open reads.
	type oldOption struct{ InitAddress []string }
	if _, err := nodeutil.OpenClientNode[fakeNode]("fake", oldOption{[]string{"a:1"}}, func(oldOption) (fakeClient, error) { return fakeClient{}, nil }, fakeHooks); err == nil || !strings.Contains(err.Error(), "no field Sentinel.MasterSet") {
		t.Errorf("Open with options lacking Sentinel.MasterSet: %v, want an error naming it", err)
	}

	opt := fakeOption{InitAddress: []string{"b:1", "a:1"}}
	n := open(t, &lib, opt)
	if got := lib.option(t); !got.DisableRetry || got.DialCtxFn == nil {
		t.Errorf("the client's options: DisableRetry %t, DialCtxFn set %t; want both", got.DisableRetry, got.DialCtxFn != nil)
	}
	if n.Addr() != "cluster:a:1,b:1" {
		t.Errorf("Addr() = %q", n.Addr())
	}
	if ab := n.Abilities(); ab.Identity != nil || ab.Confirm != nil || ab.EvalPrepared == nil || ab.Subscribe == nil {
		t.Error("a Node over several addresses (a cluster) has Identity or Confirm, or lacks EvalPrepared or Subscribe")
	}
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) || !strings.Contains(err.Error(), "Cluster") {
		t.Errorf("Identity over several addresses: %v, want ErrNoIdentity saying it is a cluster", err)
	}
}

// dial dials addr with the DialCtxFn the client got, as the library does
// with its options' Dialer, and returns a redigo connection over what it
// handed over, for the test to see whether the connection is clean.
func dial(t *testing.T, opt fakeOption, addr string, d *net.Dialer) (redis.Conn, error) {
	t.Helper()
	c, err := opt.DialCtxFn(t.Context(), addr, d, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return redis.NewConn(c, 5*time.Second, 5*time.Second), nil
}

// runID is the run id of the server at addr.
func runID(t *testing.T, addr, password string) string {
	t.Helper()
	c, err := redis.Dial("tcp", addr, redis.DialPassword(password))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := redis.String(c.Do("INFO", "server"))
	if err != nil {
		t.Fatal(err)
	}
	return nodeutil.InfoField(info, "run_id")
}

// The client's connections are read after AUTH, and handed over clean: the
// next reply on them is the next command's.
func TestOpenClientNodeReadsConnections(t *testing.T) {
	const password = "secret"
	s := redistest.Start(t, 1, redisproc.Options{Password: password})[0]
	for name, opt := range map[string]fakeOption{
		"password": {Password: password},
		"user":     {Username: "default", Password: password},
		"credentials function": {AuthCredentialsFn: func(c fakeAuthContext) (fakeAuth, error) {
			if c.Address.String() != s.Addr() {
				return fakeAuth{}, errors.New("asked for " + c.Address.String())
			}
			return fakeAuth{Password: password}, nil
		}},
	} {
		t.Run(name, func(t *testing.T) {
			var lib fakeLibrary
			opt.InitAddress = []string{s.Addr()}
			n := open(t, &lib, opt)
			if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) {
				t.Errorf("Identity before a connection: %v, want ErrNoIdentity", err)
			}
			c, err := dial(t, lib.option(t), s.Addr(), &net.Dialer{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := redis.String(c.Do("ECHO", "next")); err != nil || got != "next" {
				t.Errorf("the connection handed over answers ECHO with %q, %v", got, err)
			}
			id, err := n.Identity()
			if want := runID(t, s.Addr(), password); err != nil || id.RunID != want || id.Version == "" {
				t.Errorf("Identity = %+v, %v; want run id %s", id, err, want)
			}
		})
	}

	var lib fakeLibrary
	open(t, &lib, fakeOption{InitAddress: []string{s.Addr()}, Password: "wrong"})
	if _, err := dial(t, lib.option(t), s.Addr(), &net.Dialer{}); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("a dial with a wrong password: %v, want the master's WRONGPASS", err)
	}
}

// A Sentinel client's first dialer is the Sentinels': its connections are
// handed over as they were dialed (unauthenticated: the master's password
// is not sent), and only the others are read.
func TestOpenClientNodeLeavesSentinelsAlone(t *testing.T) {
	const password = "secret"
	s := redistest.Start(t, 1, redisproc.Options{Password: password})[0]
	var lib fakeLibrary
	n := open(t, &lib, fakeOption{InitAddress: []string{"sentinel:26379"}, Sentinel: struct{ MasterSet string }{"locks"}, Password: password})
	opt := lib.option(t)
	sentinels, masters := &net.Dialer{}, &net.Dialer{}
	for range 2 {
		c, err := dial(t, opt, s.Addr(), sentinels)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do("PING"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("PING on a connection of the Sentinels' dialer: %v, want NOAUTH (nothing sent on it)", err)
		}
	}
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) {
		t.Errorf("Identity after the Sentinels' connections only: %v, want ErrNoIdentity", err)
	}
	if _, err := dial(t, opt, s.Addr(), masters); err != nil {
		t.Fatal(err)
	}
	if id, err := n.Identity(); err != nil || id.RunID != runID(t, s.Addr(), password) {
		t.Errorf("Identity after a master's connection: %+v, %v", id, err)
	}
}

// A master that refuses INFO leaves the identity unknown, with the refusal
// as the reason; the connection still works.
func TestOpenClientNodeInfoRefused(t *testing.T) {
	s := redistest.Start(t, 1, redisproc.Options{Args: []string{"--rename-command", "INFO", ""}})[0]
	var lib fakeLibrary
	n := open(t, &lib, fakeOption{InitAddress: []string{s.Addr()}})
	c, err := dial(t, lib.option(t), s.Addr(), &net.Dialer{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := redis.String(c.Do("PING")); err != nil || got != "PONG" {
		t.Errorf("PING on the connection handed over: %q, %v", got, err)
	}
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) || !strings.Contains(err.Error(), "refused INFO") {
		t.Errorf("Identity of a master that refuses INFO: %v, want ErrNoIdentity naming the refusal", err)
	}
}
