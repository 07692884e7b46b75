package nodetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/redlock"
)

// lateDelay is how long a Delayer holds an acquire back in the late
// checks: past the node timeout, and past pool.Node's stall timeout (1s),
// which closes the connection the acquire is on, so that what comes next
// goes out on a new one.
const lateDelay = 2500 * time.Millisecond

// testLateNoScript checks that a script call that the master answers
// NOSCRIPT goes again as EVAL also when its caller stopped waiting: a
// release answered NOSCRIPT after the node timeout (the master restarted,
// or its script cache was flushed) must still run, or the lock stays on
// that master until its TTL. The master is frozen while the call goes out
// and its caller gives up; the script is flushed before, so the master
// answers NOSCRIPT once it thaws.
func (s *suite) testLateNoScript(t *testing.T, e evaler) {
	n, c := s.node(t, 0), s.control(t, 0)
	src := script(t, "return redis.call('SET', KEYS[1], ARGV[1])")
	k := key(t)
	if _, err := e.eval(ctx(t), n, src, []string{k}, "first"); err != nil {
		t.Fatal(err)
	}
	c.do("SCRIPT", "FLUSH")
	thaw, err := s.masters[0].Freeze()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("%s cannot freeze a master", s.b.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), frozenTimeout)
	_, err = e.eval(cctx, n, src, []string{k}, "late")
	cancel()
	thaw()
	if err == nil {
		t.Fatal("a script on a frozen master returned no error before its deadline")
	}
	eventually(t, "the EVAL after a NOSCRIPT that came after its caller gave up ran", func() bool {
		v, err := redis.String(c.c.Do("GET", k))
		return err == nil && v == "late"
	})
}

// testLateAcquire checks, through a Locker, that a lock whose acquire
// reaches a master late (held back by a Delayer past the node timeout and
// the Node's own stall timeouts, so that what follows may go out on
// another connection and arrive first) is never left on that master: a
// failed attempt's release, and an Unlock's, must not be overtaken by the
// acquire they follow. The Locker keeps that rule with tombstones, whatever
// the Node does with the order of its commands; the Node must only send
// every command it is given, once, and complete the release's EVAL
// fallback. Three masters, the third behind the Delayer.
func (s *suite) testLateAcquire(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, l *redlock.Locker, k string, d *Delayer)
	}{
		{"FailedAttempt", func(t *testing.T, l *redlock.Locker, k string, d *Delayer) {
			// Masters 0 and 1 are held by someone else: the attempt
			// fails and releases the third, whose acquire is late.
			for i := range 2 {
				s.control(t, i).do("SET", k, "other", "PX", 60000)
			}
			if _, err := l.TryLock(ctx(t), k, time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
				t.Fatalf("TryLock against two held masters: %v, want ErrNotAcquired", err)
			}
		}},
		{"Unlock", func(t *testing.T, l *redlock.Locker, k string, d *Delayer) {
			lk, err := l.TryLock(ctx(t), k, time.Minute)
			if err != nil {
				t.Fatalf("TryLock with two of three masters in time: %v", err)
			}
			if err := lk.Unlock(ctx(t)); err != nil {
				t.Fatalf("Unlock: %v", err)
			}
		}},
		{"UnlockAfterReconnect", func(t *testing.T, l *redlock.Locker, k string, d *Delayer) {
			lk, err := l.TryLock(ctx(t), k, time.Minute)
			if err != nil {
				t.Fatalf("TryLock with two of three masters in time: %v", err)
			}
			// The Node gives the connection that holds the acquire up (a
			// stall timeout); the release then goes out on a new one.
			if !within(lateDelay*3/4, func() bool { return d.Closed() > 0 }) {
				t.Skip("the Node kept the connection whose command got no reply")
			}
			if err := lk.Unlock(ctx(t)); err != nil {
				t.Fatalf("Unlock: %v", err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := key(t)
			d := NewDelayer(t, s.masters[2].Addr(), k, lateDelay)
			nodes := []redlock.Node{s.node(t, 0), s.node(t, 1), s.newNode(t, d.Addr())}
			for _, n := range nodes { // connections are up: the delayed command is no set-up
				if _, err := n.Do(ctx(t), "PING"); err != nil {
					t.Fatalf("PING %s: %v", n.Addr(), err)
				}
			}
			l, err := redlock.New(nodes, s.config(redlock.Config{NodeTimeout: 100 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			// One lock cycle on another key first, so that the masters know
			// the scripts: the held acquire then runs when it arrives,
			// rather than being answered NOSCRIPT.
			warm, err := l.Lock(ctx(t), key(t), time.Minute)
			if err != nil {
				t.Fatalf("warm-up Lock: %v", err)
			}
			if err := warm.Unlock(ctx(t)); err != nil {
				t.Fatalf("warm-up Unlock: %v", err)
			}
			c.run(t, l, k, d)
			control := s.control(t, 2)
			eventually(t, "the delayed acquire reached the master", d.Delivered)
			time.Sleep(100 * time.Millisecond) // it runs once it arrived
			// What the connection sent behind it (the release, when it went
			// on that connection) follows it; give it a while on a loaded
			// machine. A lock left behind stays for its TTL, a minute.
			var v string
			if !within(3*time.Second, func() bool {
				var err error
				v, err = redis.String(control.c.Do("GET", k))
				return errors.Is(err, redis.ErrNil)
			}) {
				t.Fatalf("%s = %q on the late master after its release: the acquire landed after the release and left the lock there", k, v)
			}
		})
	}
}

// within polls cond until it holds, for at most limit, and reports whether
// it did.
func within(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
