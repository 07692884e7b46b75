package nodetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// frozenTimeout is the context timeout of a call to a frozen master.
const frozenTimeout = 200 * time.Millisecond

func errorsIsCanceled(err error) bool { return errors.Is(err, context.Canceled) }

// testEndedContext: a command with an ended context fails promptly, with
// an error that matches the context's, and is applied at most once.
func (s *suite) testEndedContext(t *testing.T) {
	n, c, k := s.node(t, 0), s.control(t, 0), key(t)
	if _, err := n.Do(ctx(t), "PING"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	returnsWithin(t, Bound, "Do with a cancelled context", func() {
		_, err = n.Do(cctx, "INCR", k)
	})
	if !errorsIsCanceled(err) {
		t.Errorf("Do with a cancelled context: err = %v, want one matching context.Canceled", err)
	}
	if got := c.int("INCR", k); got > 2 {
		t.Errorf("the command was applied %d times", got-1)
	}
	// The Node is still usable.
	r, err := n.Do(ctx(t), "INCR", k)
	if v, _ := r.(int64); err != nil || v < 2 {
		t.Errorf("INCR after a cancelled call = %#v, %v", r, err)
	}
}

// testFrozen: a command to a master that accepts connections but answers
// nothing returns when its context ends, and the Node works again once
// the master does.
func (s *suite) testFrozen(t *testing.T) {
	s.frozen(t, func(n redlock.Node, cctx context.Context) error {
		_, err := n.Do(cctx, "SET", key(t), "v", "NX", "PX", 60000)
		return err
	})
}

// frozen freezes master 0 and checks that call, made with a context that
// times out, returns an error within Bound of the timeout, both on a Node
// that was connected before and on a fresh one. After the thaw the Node
// must answer again.
func (s *suite) frozen(t *testing.T, call func(n redlock.Node, cctx context.Context) error) {
	connected, fresh := s.node(t, 0), s.node(t, 0)
	if _, err := connected.Do(ctx(t), "PING"); err != nil {
		t.Fatal(err)
	}
	thaw, err := s.masters[0].Freeze()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("%s cannot freeze a master", s.b.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	thawed := false
	defer func() {
		if !thawed {
			thaw()
		}
	}()
	for _, c := range []struct {
		name string
		n    redlock.Node
	}{{"a connected Node", connected}, {"a fresh Node", fresh}} {
		cctx, cancel := context.WithTimeout(context.Background(), frozenTimeout)
		errc := make(chan error, 1)
		go func() { errc <- call(c.n, cctx) }()
		select {
		case err := <-errc:
			if err == nil {
				t.Errorf("a call to a frozen master through %s succeeded", c.name)
			}
		case <-time.After(frozenTimeout + Bound):
			// Fail, not hang: thaw the master so that the call can end.
			cancel()
			thaw()
			thawed = true
			t.Errorf("a call to a frozen master through %s did not return within %v of its context's deadline", c.name, Bound)
			select {
			case <-errc:
			case <-time.After(patience):
			}
			return
		}
		cancel()
	}
	thaw()
	thawed = true
	eventually(t, "a call after the master thawed succeeds", func() bool {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := connected.Do(cctx, "PING")
		return err == nil
	})
}

// testConcurrent: concurrent commands on one Node each get their own
// reply.
func (s *suite) testConcurrent(t *testing.T) {
	n, base := s.node(t, 0), key(t)
	s.concurrently(t, func(g, i int) error {
		want := base + ":" + string(rune('a'+g)) + ":" + time.Duration(i).String()
		r, err := n.Do(ctx(t), "ECHO", want)
		if err != nil {
			return err
		}
		if got, ok := text(r); !ok || got != want {
			return errors.New("ECHO " + want + " got " + got)
		}
		return nil
	})
}
