package pool_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait for a condition or a wake-up. It is a hang
// detector, not a timing assertion: on a loaded machine the awaited thing
// may take a while, never this long.
const waitFor = 20 * time.Second

// await fails the test unless ch receives within waitFor.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatalf("no %s within %v", what, waitFor)
	}
}

// eventually polls cond until it holds, and fails the test at waitFor with
// cond's last description.
func eventually(t *testing.T, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", waitFor, state)
		}
		<-tick.C
	}
}

// returns runs f on another goroutine and fails the test if it does not
// return within waitFor (a frozen master must not hold it).
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatalf("%s hung", what)
	}
}

// noLeaks snapshots the goroutines running now (the test's redis-server
// processes have some); the returned check fails the test if any other
// goroutine outlives a grace period.
func noLeaks(t *testing.T) func() {
	t.Helper()
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		// A restarted server gets a new process-wait goroutine.
		goleak.IgnoreAnyFunction("github.com/quorumlock/quorumlock/internal/redisproc.(*Server).Start.func1"),
	}
	return func() {
		t.Helper()
		var err error
		deadline := time.Now().Add(waitFor)
		for time.Now().Before(deadline) {
			if err = goleak.Find(opts...); err == nil {
				return
			}
		}
		t.Fatalf("goroutines leaked: %v", err)
	}
}

func numSub(t *testing.T, n *pool.Node, channel string) int64 {
	t.Helper()
	v, err := redis.Values(n.Do(t.Context(), "PUBSUB", "NUMSUB", channel))
	if err != nil || len(v) != 2 {
		t.Fatalf("PUBSUB NUMSUB %s: %v, %v", channel, v, err)
	}
	c, err := redis.Int64(v[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pubsubClients counts the server's connections in pub/sub mode.
func pubsubClients(t *testing.T, n *pool.Node) int {
	t.Helper()
	s, err := redis.String(n.Do(t.Context(), "CLIENT", "LIST", "TYPE", "pubsub"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(s, "\n")
}

// pubsubClient returns the CLIENT LIST fields of the server's only
// connection in pub/sub mode.
func pubsubClient(t *testing.T, n *pool.Node) map[string]string {
	t.Helper()
	s, err := redis.String(n.Do(t.Context(), "CLIENT", "LIST", "TYPE", "pubsub"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) != 1 || lines[0] == "" {
		t.Fatalf("pub/sub connections: %q, want exactly one", s)
	}
	fields := make(map[string]string)
	for _, f := range strings.Fields(lines[0]) {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	return fields
}

func publish(t *testing.T, n *pool.Node, channel string) int64 {
	t.Helper()
	c, err := redis.Int64(n.Do(t.Context(), "PUBLISH", channel, "released"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func subscribe(t *testing.T, n *pool.Node, channel string, ch chan<- struct{}) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	unsub, err := n.Subscribe(ctx, channel, ch)
	if err != nil {
		t.Fatal(err)
	}
	return unsub
}

func empty(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// A lock waiter is woken by the holder's release (its script PUBLISHes on
// the lock's channel) and polls as well, since a message can be missed.
func ExampleNode_Subscribe() {
	node := pool.New(pool.Config{Addr: "redis-a:6379", Pooled: true})
	defer node.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	released := make(chan struct{}, 1)
	unsubscribe, err := node.Subscribe(ctx, "release:{orders}", released)
	if err != nil {
		fmt.Println(err) // wait by polling alone
		return
	}
	defer unsubscribe()
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	for {
		// try to acquire here; on success, return
		select {
		case <-released:
		case <-poll.C:
		case <-ctx.Done():
			return
		}
	}
}

func TestSubscribeWakesOnPublish(t *testing.T) {
	for _, password := range []string{"", "s3cret"} {
		t.Run(fmt.Sprintf("password=%t", password != ""), func(t *testing.T) {
			_, n := start(t, redisproc.Options{Password: password}, pool.Config{Pooled: true})
			ch := make(chan struct{}, 1)
			unsub := subscribe(t, n, "release:{k}", ch)
			defer unsub()
			if !empty(ch) {
				t.Fatal("woken before any PUBLISH")
			}
			// Subscribe returned, so the server has the subscription: the
			// PUBLISH from a pool connection must reach it.
			if got := publish(t, n, "release:{k}"); got != 1 {
				t.Fatalf("PUBLISH reached %d subscribers, want 1", got)
			}
			await(t, ch, "wake-up after PUBLISH")
		})
	}
}

func TestSubscribeSharesOneConnection(t *testing.T) {
	_, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	ch1, ch2, barrier := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	unsub1 := subscribe(t, n, "c", ch1)
	unsub2 := subscribe(t, n, "c", ch2)
	defer unsub2()
	defer subscribe(t, n, "barrier", barrier)()

	if got := pubsubClients(t, n); got != 1 {
		t.Fatalf("%d pub/sub connections for two channels, want 1", got)
	}
	if got := numSub(t, n, "c"); got != 1 {
		t.Fatalf("NUMSUB c = %d, want 1", got)
	}
	publish(t, n, "c")
	await(t, ch1, "wake-up of the first registration")
	await(t, ch2, "wake-up of the second registration")

	unsub1()
	unsub1() // idempotent: must not drop the other registration's count
	// A new subscription is a barrier: once it is confirmed, an
	// UNSUBSCRIBE c, had one been sent, has been processed too.
	other := make(chan struct{}, 1)
	defer subscribe(t, n, "other", other)()
	if got := numSub(t, n, "c"); got != 1 {
		t.Fatalf("NUMSUB c = %d after one of two unsubscribes, want 1", got)
	}
	publish(t, n, "c")
	publish(t, n, "barrier")
	// The single receiver handles messages in order: once the barrier's
	// message is delivered, c's message has been delivered too.
	await(t, barrier, "barrier message")
	if empty(ch2) {
		t.Fatal("the remaining registration was not woken")
	}
	if !empty(ch1) {
		t.Fatal("an unsubscribed registration was woken")
	}
}

func TestLastUnsubscribeUnsubscribes(t *testing.T) {
	_, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	checkLeaks := noLeaks(t)
	chA, chB := make(chan struct{}, 1), make(chan struct{}, 1)
	unsubA := subscribe(t, n, "a", chA)
	unsubB := subscribe(t, n, "b", chB)

	unsubA()
	unsubA() // idempotent: must not count as b's removal
	eventually(t, func() (bool, string) {
		got := numSub(t, n, "a")
		return got == 0, fmt.Sprintf("NUMSUB a = %d, want 0", got)
	})
	// The connection is still there for b: a went by UNSUBSCRIBE, not by
	// closing the connection.
	if got, clients := numSub(t, n, "b"), pubsubClients(t, n); got != 1 || clients != 1 {
		t.Fatalf("NUMSUB b = %d, pub/sub connections = %d; want 1 and 1", got, clients)
	}

	// Subscribing again after the UNSUBSCRIBE works.
	chA2 := make(chan struct{}, 1)
	unsubA2 := subscribe(t, n, "a", chA2)
	if got := publish(t, n, "a"); got != 1 {
		t.Fatalf("PUBLISH a reached %d subscribers after re-subscribing, want 1", got)
	}
	await(t, chA2, "wake-up after re-subscribing")
	if !empty(chA) {
		t.Fatal("the removed registration was woken")
	}

	// The last registration closes the connection and stops the goroutines.
	unsubA2()
	unsubB()
	eventually(t, func() (bool, string) {
		got := pubsubClients(t, n)
		return got == 0, fmt.Sprintf("%d pub/sub connections, want 0", got)
	})
	checkLeaks()
}

// A full (here: never read) channel must not hold up deliveries to others.
func TestFullChannelDoesNotBlock(t *testing.T) {
	_, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	full, other := make(chan struct{}), make(chan struct{}, 1)
	defer subscribe(t, n, "a", full)()
	defer subscribe(t, n, "b", other)()
	for range 3 {
		publish(t, n, "a")
	}
	publish(t, n, "b")
	await(t, other, "wake-up behind messages for a full channel")
}

func TestReconnectAfterRestart(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	checkLeaks := noLeaks(t)
	ch := make(chan struct{}, 1)
	unsub := subscribe(t, n, "c", ch)

	if err := srv.Restart(0); err != nil {
		t.Fatal(err)
	}
	// Nothing is published: this wake-up can only be the one after the
	// reconnect, and it comes once the channel is subscribed again.
	await(t, ch, "wake-up after reconnect")
	if got := numSub(t, n, "c"); got != 1 {
		t.Fatalf("NUMSUB c = %d after reconnect, want 1", got)
	}
	if got := publish(t, n, "c"); got != 1 {
		t.Fatalf("PUBLISH after reconnect reached %d subscribers, want 1", got)
	}
	await(t, ch, "wake-up by a PUBLISH after reconnect")

	unsub()
	n.Close()
	checkLeaks()
}

// proxy forwards TCP connections to a server and reports each accepted
// connection, so that a test can see a client redial a frozen server.
type proxy struct {
	ln       net.Listener
	upstream string
	accepted chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
	sent     bytes.Buffer // everything clients sent, guarded by mu
}

// Write records bytes that clients sent.
func (p *proxy) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent.Write(b)
}

// count reports how often s occurs in what clients sent.
func (p *proxy) count(s string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Count(p.sent.String(), s)
}

func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream, accepted: make(chan struct{}, 100)}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted <- struct{}{}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(u, io.TeeReader(c, p), c)
		go p.pipe(c, u, u)
	}
}

func (p *proxy) pipe(dst net.Conn, src io.Reader, srcConn net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	srcConn.Close()
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// A frozen server keeps the TCP connection open and answers nothing: the
// health PING must find that out, and the node must redial and subscribe
// again once the server answers.
func TestHealthCheckReplacesFrozenConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the health check (a few seconds)")
	}
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	admin := pool.New(pool.Config{Addr: srv.Addr(), Pooled: true})
	defer admin.Close()
	p := startProxy(t, srv.Addr())
	n := pool.New(pool.Config{Addr: p.addr(), Pooled: true}) // only its pub/sub connection goes through p
	defer n.Close()

	ch := make(chan struct{}, 1)
	defer subscribe(t, n, "c", ch)()
	await(t, p.accepted, "first connection")
	// A live connection gets health PINGs, and answering them keeps it.
	id := pubsubClient(t, admin)["id"]
	eventually(t, func() (bool, string) {
		c := pubsubClient(t, admin)
		return c["cmd"] == "ping" && c["id"] == id, fmt.Sprintf("pub/sub connection %v, want id=%s cmd=ping", c, id)
	})

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	await(t, p.accepted, "redial of the frozen connection")
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	await(t, ch, "wake-up after reconnect")
	eventually(t, func() (bool, string) {
		got := numSub(t, admin, "c")
		return got == 1, fmt.Sprintf("NUMSUB c = %d, want 1 (the old connection gone)", got)
	})
	if got := publish(t, admin, "c"); got != 1 {
		t.Fatalf("PUBLISH after reconnect reached %d subscribers, want 1", got)
	}
	await(t, ch, "wake-up by a PUBLISH after reconnect")
}

// A channel whose UNSUBSCRIBE is on its way must not count as subscribed: a
// new Subscribe must wait for its own SUBSCRIBE to be confirmed. The server
// is frozen so that the UNSUBSCRIBE stays unanswered.
func TestResubscribeWhileUnsubscribeInFlight(t *testing.T) {
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	admin := pool.New(pool.Config{Addr: srv.Addr(), Pooled: true})
	defer admin.Close()
	p := startProxy(t, srv.Addr())
	n := pool.New(pool.Config{Addr: p.addr(), Pooled: true})
	defer n.Close()

	unsubA := subscribe(t, n, "a", make(chan struct{}, 1))
	defer subscribe(t, n, "b", make(chan struct{}, 1))() // keeps the connection
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()
	unsubA()
	eventually(t, func() (bool, string) {
		return p.count("UNSUBSCRIBE") == 1, "UNSUBSCRIBE not sent"
	})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := n.Subscribe(ctx, "a", make(chan struct{}, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Subscribe while the UNSUBSCRIBE is unanswered: %v, want context.DeadlineExceeded", err)
	}

	// Once the server answers, a Subscribe that returns is subscribed.
	type result struct {
		unsub func()
		err   error
	}
	done := make(chan result, 1)
	ch := make(chan struct{}, 1)
	go func() {
		unsub, err := n.Subscribe(t.Context(), "a", ch)
		done <- result{unsub, err}
	}()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(waitFor):
		t.Fatal("Subscribe after resume hung")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.unsub()
	if got := publish(t, admin, "a"); got != 1 {
		t.Fatalf("PUBLISH a reached %d subscribers, want 1", got)
	}
	await(t, ch, "wake-up after re-subscribing")
}

// A frozen master must hold neither Subscribe past its context, nor
// unsubscribe, nor Close; and every goroutine ends while it is still frozen.
func TestFrozenMaster(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	admin := pool.New(pool.Config{Addr: srv.Addr(), Pooled: true})
	defer admin.Close()
	fresh := pool.New(pool.Config{Addr: srv.Addr(), Pooled: true}) // no pub/sub connection yet
	defer fresh.Close()
	checkLeaks := noLeaks(t)

	unsubA := subscribe(t, n, "a", make(chan struct{}, 1))
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()

	for _, tc := range []struct {
		name    string
		node    *pool.Node
		channel string
	}{
		{"new connection", fresh, "x"},
		{"established connection", n, "b"},
	} {
		returns(t, "Subscribe on a frozen master ("+tc.name+")", func() {
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			unsub, err := tc.node.Subscribe(ctx, tc.channel, make(chan struct{}, 1))
			if !errors.Is(err, context.DeadlineExceeded) || unsub != nil {
				t.Errorf("Subscribe on a frozen master (%s): %v, want context.DeadlineExceeded", tc.name, err)
			}
		})
	}

	// One more Subscribe waits without a deadline; Close must end it.
	waiting := make(chan error, 1)
	go func() {
		_, err := n.Subscribe(t.Context(), "c", make(chan struct{}, 1))
		waiting <- err
	}()
	returns(t, "unsubscribe on a frozen master", unsubA)
	returns(t, "Close on a frozen master", func() { n.Close(); fresh.Close() })
	select {
	case err := <-waiting:
		if err == nil {
			t.Fatal("Subscribe on a frozen master succeeded")
		}
	case <-time.After(waitFor):
		t.Fatal("Subscribe outlived Close")
	}
	checkLeaks()

	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() (bool, string) {
		got := pubsubClients(t, admin)
		return got == 0, fmt.Sprintf("%d pub/sub connections after resume, want 0", got)
	})
}

func TestSubscribeReportsConnectionError(t *testing.T) {
	srv := redistest.Start(t, 1, redisproc.Options{Password: "s3cret"})[0]
	port, err := redisproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		cfg   pool.Config
		match func(error) bool
	}{
		{"refused", pool.Config{Addr: fmt.Sprintf("127.0.0.1:%d", port)}, func(err error) bool {
			var op *net.OpError
			return errors.As(err, &op)
		}},
		{"wrong password", pool.Config{Addr: srv.Addr(), Password: "wrong"}, func(err error) bool {
			var rerr redis.Error
			return errors.As(err, &rerr)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := pool.New(tc.cfg)
			defer n.Close()
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err := n.Subscribe(ctx, "c", make(chan struct{}, 1))
			if !errors.Is(err, context.DeadlineExceeded) || !tc.match(err) {
				t.Fatalf("Subscribe: %v, want context.DeadlineExceeded with the connection error", err)
			}
		})
	}
}

func TestSubscribeBadInput(t *testing.T) {
	_, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	if _, err := n.Subscribe(t.Context(), "c", nil); err == nil || !strings.HasPrefix(err.Error(), "pool: ") {
		t.Errorf("Subscribe with a nil channel: %v, want a pool: error", err)
	}
	noAddr := pool.New(pool.Config{})
	defer noAddr.Close()
	if _, err := noAddr.Subscribe(t.Context(), "c", make(chan struct{})); !errors.Is(err, pool.ErrNoAddr) {
		t.Errorf("Subscribe without address: %v, want ErrNoAddr", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := n.Subscribe(ctx, "c", make(chan struct{})); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe with a cancelled context: %v, want context.Canceled", err)
	}
	if got := pubsubClients(t, n); got != 0 {
		t.Errorf("%d pub/sub connections after failed Subscribes, want 0", got)
	}
}

func TestCloseStopsSubscriptions(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	admin := pool.New(pool.Config{Addr: srv.Addr(), Pooled: true})
	defer admin.Close()
	checkLeaks := noLeaks(t)
	var unsubs []func()
	for _, c := range []string{"a", "b", "c"} {
		unsubs = append(unsubs, subscribe(t, n, c, make(chan struct{}, 1)))
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	checkLeaks()
	for _, unsub := range unsubs {
		unsub() // after Close: a no-op that neither blocks nor panics
	}
	if _, err := n.Subscribe(t.Context(), "a", make(chan struct{}, 1)); err == nil {
		t.Fatal("Subscribe on a closed node succeeded")
	}
	eventually(t, func() (bool, string) {
		got := pubsubClients(t, admin)
		return got == 0, fmt.Sprintf("%d pub/sub connections after Close, want 0", got)
	})
	checkLeaks()
}

// Many goroutines subscribe and unsubscribe a few shared channels at once,
// so that channels are re-subscribed while their UNSUBSCRIBE is in flight
// and sessions end while new ones start. Each Subscribe that returns must be
// subscribed at the server.
func TestConcurrentSubscribers(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{Pooled: true})
	admin := pool.New(pool.Config{Addr: srv.Addr(), Pooled: true})
	defer admin.Close()
	checkLeaks := noLeaks(t)
	channels := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				channel := channels[(g+i)%len(channels)]
				ctx, cancel := context.WithTimeout(t.Context(), waitFor)
				ch := make(chan struct{}, 1)
				unsub, err := n.Subscribe(ctx, channel, ch)
				cancel()
				if err != nil {
					t.Errorf("Subscribe %s: %v", channel, err)
					return
				}
				got, err := redis.Int64(admin.Do(t.Context(), "PUBLISH", channel, "x"))
				if err != nil || got < 1 {
					t.Errorf("PUBLISH %s right after Subscribe returned reached %d subscribers (%v), want >= 1", channel, got, err)
				}
				select {
				case <-ch:
				case <-time.After(waitFor):
					t.Errorf("no wake-up on %s", channel)
				}
				unsub()
			}
		})
	}
	wg.Wait()
	eventually(t, func() (bool, string) {
		got := pubsubClients(t, admin)
		return got == 0, fmt.Sprintf("%d pub/sub connections after every unsubscribe, want 0", got)
	})
	checkLeaks()
}
