package inorder_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/quorumlock/quorumlock/internal/inorder"
)

// blocked is a send that returns once release is closed, and records
// that it ran.
type blocked struct {
	ran     atomic.Bool
	release chan struct{}
}

func newBlocked() *blocked { return &blocked{release: make(chan struct{})} }

func (b *blocked) send() {
	b.ran.Store(true)
	<-b.release
}

// start starts b through c under a context that the returned function
// ends, and returns what Do reports once it returns.
func start(c *inorder.Calls, b *blocked) (giveUp func(), returned <-chan bool) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan bool, 1)
	go func() { ch <- c.Do(ctx, b.send) }()
	return cancel, ch
}

// orphan gives up the call that start started: Do must return false while
// its send still runs.
func orphan(t *testing.T, giveUp func(), returned <-chan bool) {
	t.Helper()
	synctest.Wait()
	giveUp()
	if <-returned {
		t.Fatal("Do reported a send that had not returned")
	}
}

// A call whose send returns in time reports it, and leaves nothing for
// the next call to wait for.
func TestReturnedCallsDoNotHoldUpOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c inorder.Calls
		if !c.Do(context.Background(), func() {}) {
			t.Fatal("Do reported a send that returned as not returned")
		}
		b := newBlocked()
		go c.Do(context.Background(), b.send)
		synctest.Wait()
		if !b.ran.Load() {
			t.Fatal("a call waited although no call before it was left running")
		}
		close(b.release)
	})
}

// A call started after another's caller gave up sends only once that
// call returned.
func TestCallWaitsForAnOrphan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c inorder.Calls
		first, second := newBlocked(), newBlocked()
		giveUp, returnedFirst := start(&c, first)
		orphan(t, giveUp, returnedFirst)
		close(second.release)
		returned := make(chan bool, 1)
		go func() { returned <- c.Do(context.Background(), second.send) }()
		synctest.Wait()
		if second.ran.Load() {
			t.Fatal("a call was sent while the call its caller gave up on before it still ran: it may overtake it")
		}
		close(first.release)
		if !<-returned || !second.ran.Load() {
			t.Fatal("the call did not run once the orphan before it returned")
		}
	})
}

// A call waits for every orphan before it, also for one that returns after
// a later orphan did.
func TestCallWaitsForEveryOrphan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c inorder.Calls
		first, second := newBlocked(), newBlocked()
		giveUpFirst, firstReturned := start(&c, first)
		giveUpSecond, secondReturned := start(&c, second) // both run: no orphan yet
		orphan(t, giveUpFirst, firstReturned)
		orphan(t, giveUpSecond, secondReturned)
		close(second.release)
		synctest.Wait() // the later orphan has returned
		last := newBlocked()
		close(last.release)
		go c.Do(context.Background(), last.send)
		synctest.Wait()
		if last.ran.Load() {
			t.Fatal("a call was sent while an orphan before it still ran, because a later orphan returned first")
		}
		close(first.release)
		synctest.Wait()
		if !last.ran.Load() {
			t.Fatal("the call did not run once every orphan before it returned")
		}
	})
}
