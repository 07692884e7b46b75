package nodetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// releaseSrc is a compare-and-delete, as redlock's release.
const releaseSrc = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`

// overtakeRounds is how many acquire-release pairs testNoOvertake makes: a
// Node that picks one of several connections at random per command gets
// the order wrong in most of them.
const overtakeRounds = 12

// testNoOvertake checks, at the transport, the rule that a release on a
// master goes out only after that master's acquire returned: a call made
// after another call returned at its context's end must not reach the
// master before it. Through the Node, a BLPOP with a timeout holds up the
// connection it goes on; a SET NX made then with a short deadline returns
// at its deadline if it waits behind the BLPOP; the compare-and-delete
// made next must run after it, so the key is gone once both ran. A Node
// that sends the delete at once on another connection lets it run first
// (it deletes nothing), and the SET then leaves the key behind until its
// TTL: a lock left on the master, which the next owner waits out. A Node
// that sends each call on a connection of its own runs the SET at once and
// passes; a Node that refuses blocking commands cannot be held up so, and
// the check is skipped.
func (s *suite) testNoOvertake(t *testing.T) {
	n, c := s.node(t, 0), s.control(t, 0)
	if !strings.Contains(c.str("INFO", "clients"), "\nblocked_clients:") {
		t.Skipf("%s does not report blocked clients (INFO clients), which the check waits for", s.b.Name)
	}
	if _, err := n.Do(ctx(t), "PING"); err != nil {
		t.Fatal(err)
	}
	left := 0
	for range overtakeRounds {
		k := key(t)
		bctx := ctx(t)
		blpop := make(chan error, 1)
		go func() {
			_, err := n.Do(bctx, "BLPOP", k+":queue", "0.3")
			blpop <- err
		}()
		if err := s.awaitBlocked(t, c, blpop); err != nil {
			t.Skipf("the Node refused BLPOP, so no connection of it can be held up: %v", err)
		}
		sctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, _ = n.Do(sctx, "SET", k, "owner", "NX", "PX", 60000) // granted, or returned at its deadline
		cancel()
		if _, err := n.Eval(ctx(t), hashOf(releaseSrc), releaseSrc, []string{k}, "owner"); err != nil {
			t.Fatalf("the release: %v", err)
		}
		if err := <-blpop; err != nil {
			t.Fatalf("the BLPOP: %v", err)
		}
		// The SET, if it waited behind the BLPOP, ran when the BLPOP
		// ended, before its reply was written.
		if v, err := redis.String(c.c.Do("GET", k)); err == nil {
			left++
			t.Logf("%s = %q after its release", k, v)
		}
	}
	if left > 0 {
		t.Errorf("%d of %d releases ran before the SET that their caller had given up on: the SET then left the lock on the master until its TTL (a call must not overtake one that returned before it was made)", left, overtakeRounds)
	}
}

// awaitBlocked waits until the master has a client blocked (the BLPOP), or
// the BLPOP returned: it returns the BLPOP's error when the Node refused it.
func (s *suite) awaitBlocked(t *testing.T, c *control, blpop <-chan error) error {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		select {
		case err := <-blpop:
			if err == nil {
				t.Fatal("the BLPOP returned before its timeout")
			}
			return err
		default:
		}
		if strings.Contains(c.str("INFO", "clients"), "\nblocked_clients:1\r") {
			return nil
		}
		if time.Now().After(deadline) {
			t.Fatalf("the BLPOP did not block within %v", patience)
		}
		time.Sleep(time.Millisecond)
	}
}
