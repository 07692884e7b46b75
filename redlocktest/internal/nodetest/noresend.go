package nodetest

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/redlock"
)

// testNoResend checks the transport rule that safety depends on: a command
// that may have reached the master is never sent again. Through a
// ReplyDropper, the master runs an INCR (and a script that INCRs) but the
// reply is lost and the connection closed: the call must fail, and the
// master must have run it exactly once. A Node that resends it runs it
// twice: a reentrant release decremented twice hands the lock to another
// owner.
func (s *suite) testNoResend(t *testing.T) {
	const src = "return redis.call('INCR', KEYS[1])"
	c := s.control(t, 0)
	c.do("SCRIPT", "LOAD", src) // a NOSCRIPT reply dropped would hide that the script never ran
	for _, call := range []struct {
		name string
		do   func(n redlock.Node, k string) error
	}{
		{"Do", func(n redlock.Node, k string) error { _, err := n.Do(ctx(t), "INCR", k); return err }},
		{"Eval", func(n redlock.Node, k string) error {
			_, err := n.Eval(ctx(t), hashOf(src), src, []string{k})
			return err
		}},
	} {
		t.Run(call.name, func(t *testing.T) {
			k := key(t)
			p := NewReplyDropper(t, s.masters[0].Addr(), k)
			n := s.newNode(t, p.Addr())
			if _, err := n.Do(ctx(t), "PING"); err != nil { // a connection is up: the marked command is no set-up
				t.Fatalf("PING through the proxy: %v", err)
			}
			if err := call.do(n, k); err == nil {
				t.Errorf("%s whose reply was lost returned no error", call.name)
			}
			ran, err := redis.Int(c.c.Do("GET", k))
			if err != nil {
				t.Fatalf("GET %s: %v", k, err)
			}
			if ran != 1 {
				t.Fatalf("the master ran the command %d times, want exactly once: a lost reply is a failed call, never a resend", ran)
			}
		})
	}
}
