package redlock_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// cluster starts n real masters and returns them with a pool.Node for each.
func cluster(t *testing.T, n int) ([]*redisproc.Server, []*pool.Node) {
	t.Helper()
	servers := redistest.Start(t, n, redisproc.Options{})
	nodes := make([]*pool.Node, n)
	for i, s := range servers {
		nodes[i] = pool.New(pool.Config{Addr: s.Addr()})
		t.Cleanup(func() { nodes[i].Close() })
	}
	return servers, nodes
}

func asNodes[N redlock.Node](nodes []N) []redlock.Node {
	out := make([]redlock.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n
	}
	return out
}

// newLocker makes a Locker; a zero NodeTimeout becomes a generous one, so
// that a loaded test machine does not turn into node failures in tests that
// are not about timeouts. Over fakes, which know no identity, the restart
// guard is off: the guard's tests run real masters.
func newLocker(t *testing.T, nodes []redlock.Node, cfg redlock.Config) *redlock.Locker {
	t.Helper()
	if cfg.NodeTimeout == 0 {
		cfg.NodeTimeout = 500 * time.Millisecond
	}
	if cfg.RestartGuard == 0 && redlock.AbilitiesOf(nodes[0]).Identity == nil {
		cfg.RestartGuard = -1
	}
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// get reads key on a node directly ("" when absent).
func get(t *testing.T, n *pool.Node, key string) string {
	t.Helper()
	v, err := redis.String(n.Do(context.Background(), "GET", key))
	if err == redis.ErrNil {
		return ""
	}
	if err != nil {
		t.Fatalf("GET %s on %s: %v", key, n.Addr(), err)
	}
	return v
}

// values reads key on every node.
func values(t *testing.T, nodes []*pool.Node, key string) []string {
	t.Helper()
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = get(t, n, key)
	}
	return out
}

// await polls cond until it holds, failing the test after a generous
// deadline. Calls return at the quorum, so the other nodes' commands may
// still be landing: tests that look at every node await their state.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out awaiting: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// awaitValues awaits key's value on every node to be want.
func awaitValues(t *testing.T, nodes []*pool.Node, key string, want ...string) {
	t.Helper()
	var got []string
	await(t, fmt.Sprintf("%s = %q on every node", key, want), func() bool {
		got = values(t, nodes, key)
		return fmt.Sprint(got) == fmt.Sprint(want)
	})
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// spy wraps a node and counts the calls that reach it, recording the tokens
// of the acquires (the scripts that SET NX) it forwards.
type spy struct {
	redlock.Node
	calls  atomic.Int64
	mu     sync.Mutex
	tokens []string
	// beforeSet, if set, runs before each acquire is forwarded.
	beforeSet func()
}

// Abilities forwards the wrapped Node's, but for its script calls, which
// go through the spy's Eval.
func (s *spy) Abilities() redlock.Abilities { return callsThrough(s.Node) }

// callsThrough is the abilities of inner for a wrapper whose Eval must see
// every script call: inner's, without EvalPrepared and EvalAsync.
func callsThrough(inner redlock.Node) redlock.Abilities {
	a := redlock.AbilitiesOf(inner)
	a.EvalPrepared, a.EvalAsync = nil, nil
	return a
}

func (s *spy) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	s.calls.Add(1)
	return s.Node.Do(ctx, cmd, args...)
}

func (s *spy) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	s.calls.Add(1)
	if strings.Contains(src, "'NX'") {
		s.mu.Lock()
		s.tokens = append(s.tokens, args[0].(string))
		s.mu.Unlock()
		if s.beforeSet != nil {
			s.beforeSet()
		}
	}
	return s.Node.Eval(ctx, hash, src, keys, args...)
}

func (s *spy) setTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokens...)
}

// landedEverywhere waits until key exists on every node. A call that
// returned once a quorum granted may not have sent to the last master yet
// (on a busy machine), and a spy counts that send when it happens: a test
// that counts what a later call sends waits for this first.
func landedEverywhere(t *testing.T, nodes []*pool.Node, key string) {
	t.Helper()
	await(t, key+" on every node", func() bool {
		for _, node := range nodes {
			if n, _ := node.Do(t.Context(), "EXISTS", key); n != int64(1) {
				return false
			}
		}
		return true
	})
}

func spies(nodes []*pool.Node) []*spy {
	out := make([]*spy, len(nodes))
	for i, n := range nodes {
		out[i] = &spy{Node: n}
	}
	return out
}

// fake is an in-memory master for tests under testing/synctest: it knows SET
// NX PX and the release and extend scripts, answers after delay (never, for
// a negative delay, until the call's context ends), and expires keys on the
// bubble's fake clock.
type fake struct {
	addr     string
	delay    time.Duration
	setDelay time.Duration // when > 0, the delay of SET instead of delay
	deaf     bool          // SET ignores its context: it takes setDelay regardless
	err      error         // answered instead of executing, when set

	mu   sync.Mutex
	keys map[string]entry
	sent atomic.Int64
}

type entry struct {
	value    string
	expireAt time.Time
}

func newFakes(delays ...time.Duration) []*fake {
	out := make([]*fake, len(delays))
	for i, d := range delays {
		out[i] = &fake{addr: fmt.Sprintf("fake-%d", i), delay: d, keys: map[string]entry{}}
	}
	return out
}

func (f *fake) Addr() string { return f.addr }

func (f *fake) wait(ctx context.Context, delay time.Duration) error {
	f.sent.Add(1)
	if delay < 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-time.After(delay):
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fake) live(key string) (entry, bool) {
	e, ok := f.keys[key]
	if ok && !time.Now().Before(e.expireAt) {
		delete(f.keys, key)
		return entry{}, false
	}
	return e, ok
}

func (f *fake) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	delay := f.delay
	if f.setDelay > 0 {
		delay = f.setDelay
	}
	if f.deaf {
		ctx = context.Background()
	}
	if err := f.wait(ctx, delay); err != nil {
		return nil, err
	}
	if cmd != "SET" || len(args) != 5 {
		return nil, fmt.Errorf("fake: unsupported %s %v", cmd, args)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := args[0].(string)
	if _, ok := f.live(key); ok {
		return nil, nil
	}
	f.keys[key] = entry{args[1].(string), time.Now().Add(time.Duration(args[4].(int64)) * time.Millisecond)}
	return "OK", nil
}

// Eval runs the plain lock's scripts: the acquire (SET NX PX unless the
// attempt's tombstone, KEYS[1], exists), the release (compare-and-delete,
// or a tombstone) and the extend (compare-and-PEXPIRE). An acquire takes
// setDelay when that is set, ignoring its context when deaf.
func (f *fake) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	acquire := strings.Contains(src, "'NX'")
	delay := f.delay
	if acquire && f.setDelay > 0 {
		delay = f.setDelay
	}
	if acquire && f.deaf {
		ctx = context.Background()
	}
	if err := f.wait(ctx, delay); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	tomb, key, token := keys[0], keys[1], args[0].(string)
	ms := func(a any) time.Duration { return time.Duration(a.(int64)) * time.Millisecond }
	e, ok := f.live(key)
	switch {
	case acquire:
		if _, dead := f.live(tomb); dead || ok {
			return int64(0), nil
		}
		f.keys[key] = entry{token, time.Now().Add(ms(args[1]))}
	case strings.Contains(src, "'DEL'"):
		if !ok || e.value != token {
			f.keys[tomb] = entry{"1", time.Now().Add(ms(args[2]))}
			return int64(0), nil
		}
		delete(f.keys, key)
	case strings.Contains(src, "'PEXPIRE'"):
		if !ok || e.value != token {
			return int64(0), nil
		}
		e.expireAt = time.Now().Add(ms(args[1]))
		f.keys[key] = e
	default:
		return nil, fmt.Errorf("fake: unknown script")
	}
	return int64(1), nil
}

func (f *fake) value(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, _ := f.live(key)
	return e.value
}

// connect makes every node connect to its master (a PING each, without
// the node timeout's bound), so that a test whose Locker has a short node
// timeout does not meet a connection still being set up on a loaded
// machine.
func connect(t *testing.T, nodes []*pool.Node) {
	t.Helper()
	for _, n := range nodes {
		if _, err := n.Do(t.Context(), "PING"); err != nil {
			t.Fatalf("PING %s: %v", n.Addr(), err)
		}
	}
}

// warm connects every node and takes and releases a lock of ttl with l,
// so that its restart guard has read and written the masters' records for
// ttl, and waits until every master released it (no call of the warm-up
// is in flight then): a test about what a fault does to a lock then sees
// nothing of the warm-up.
func warm(t *testing.T, l *redlock.Locker, nodes []*pool.Node, ttl time.Duration) {
	t.Helper()
	connect(t, nodes)
	lk, err := l.TryLock(t.Context(), "warm-up", ttl)
	if err != nil {
		t.Fatalf("warm-up lock: %v", err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatalf("warm-up unlock: %v", err)
	}
	awaitValues(t, nodes, "warm-up", repeat("", len(nodes))...)
}
