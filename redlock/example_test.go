package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Five independent masters, the default quorum of three.
func ExampleNew() {
	var nodes []redlock.Node
	for _, addr := range []string{"redis-a:6379", "redis-b:6379", "redis-c:6379", "redis-d:6379", "redis-e:6379"} {
		nodes = append(nodes, pool.New(pool.Config{Addr: addr}))
	}
	locker, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(locker.Quorum(), "of", locker.Nodes())
	// Output: 3 of 5
}

// Wait up to five seconds for the lock, work until Until, then unlock.
func ExampleLocker_Lock() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lk, err := locker.Lock(ctx, "invoice:42", 10*time.Second)
	if err != nil {
		log.Fatal(err) // errors.Is(err, context.DeadlineExceeded) when it waited in vain
	}
	fmt.Println("locked", lk.Key())

	workCtx, stop := context.WithDeadline(ctx, lk.Until())
	_ = workCtx // do the protected work with workCtx
	stop()

	if err := lk.Unlock(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("unlocked")
	// Output:
	// locked invoice:42
	// unlocked
}

// One attempt; tell "someone else holds it" from "the masters are down"
// with errors.Is: ErrUnavailable means too few masters answered and none
// refused, so the lock may well be free (retry later, alert, or run
// anyway where that is safe); ErrNotAcquired alone means it is held.
func ExampleLocker_TryLock() {
	try := func(locker *redlock.Locker, ttl time.Duration) {
		ctx := context.Background()
		lk, err := locker.TryLock(ctx, "report:daily", ttl)
		switch {
		case err == nil:
			fmt.Println("locked")
			lk.Unlock(ctx)
		case errors.Is(err, redlock.ErrInvalid):
			log.Fatal(err) // a bug or a misconfiguration: never "down"
		case errors.Is(err, redlock.ErrUnavailable):
			fmt.Println("masters unavailable: the lock may be free; retry later")
		case errors.Is(err, redlock.ErrNotAcquired):
			fmt.Println("held elsewhere: skip this run")
		}
	}

	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close(context.Background())
	ctx := context.Background()
	other, err := locker.Lock(ctx, "report:daily", time.Minute) // another run holds it
	if err != nil {
		log.Fatal(err)
	}
	try(locker, time.Minute)
	other.Unlock(ctx)
	try(locker, time.Minute)

	// Masters that are down: nothing listens on these ports.
	var down []redlock.Node
	for _, addr := range []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"} {
		n := pool.New(pool.Config{Addr: addr})
		defer n.Close()
		down = append(down, n)
	}
	unreachable, err := redlock.New(down, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer unreachable.Close(context.Background())
	// A short TTL: the release of the failed attempt is sent again until it
	// passed (the acquire of a master that did not answer may still land),
	// and Close waits for it.
	try(unreachable, time.Second)
	// Output:
	// held elsewhere: skip this run
	// locked
	// masters unavailable: the lock may be free; retry later
}

// Extend before Until passes; once it has passed the lock cannot be saved.
func ExampleLock_Extend() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lk, err := locker.Lock(ctx, "upload:9", 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Unlock(ctx)

	before := lk.Until()
	err = lk.Extend(ctx, time.Minute)
	switch {
	case errors.Is(err, redlock.ErrLockLost):
		fmt.Println("stop working: the lock is no longer guaranteed")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("extended, Until moved on:", lk.Until().After(before))
	}
	// Output: extended, Until moved on: true
}

// Run a job under the lock, renewed while it runs; ctx is cancelled the
// moment the lock can no longer be guaranteed.
func ExampleLocker_Do() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}

	exported := 0
	err = locker.Do(context.Background(), "nightly-export", 30*time.Second, func(ctx context.Context) error {
		for batch := 0; batch < 3; batch++ {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx) // matches redlock.ErrLockLost if the lock was lost
			}
			exported++ // export one batch with ctx
		}
		return nil
	})
	if errors.Is(err, redlock.ErrLockLost) {
		log.Print("the export may have overlapped another run")
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exported", exported, "batches")
	// Output: exported 3 batches
}

// A holder that watches Done stops as soon as the lock is not guaranteed.
// This lock is not renewed (no Config.AutoRenew), so it ends at its Until.
func ExampleLock_Done() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lk, err := locker.Lock(ctx, "session:3", 200*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Unlock(ctx)

	select {
	case <-lk.Done():
		fmt.Println("stop: lock lost", errors.Is(lk.Err(), redlock.ErrLockLost))
	case <-time.After(time.Minute):
		fmt.Println("still held")
	}
	// Output: stop: lock lost true
}

// Pass the fencing token to the resource, which refuses tokens lower than
// the highest it has seen.
func ExampleLock_Fence() {
	// In a real program: pool.New nodes for your masters, each with AOF and
	// appendfsync always, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{Fencing: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	first, err := locker.Lock(ctx, "ledger", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	first.Unlock(ctx)

	next, err := locker.Lock(ctx, "ledger", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer next.Unlock(ctx)
	// db.Exec("UPDATE ledger SET ..., fence = $1 WHERE fence <= $1", next.Fence())
	fmt.Println("the next holder's token is greater:", next.Fence() > first.Fence())
	// Tokens start from the masters' clocks (microseconds since 1970), so
	// that a counter lost in a restart comes back above them.
	fmt.Println("tokens are timestamps:", first.Fence() > time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
	// Output:
	// the next holder's token is greater: true
	// tokens are timestamps: true
}

// The same owner may take the lock again; each Unlock gives one hold back.
func ExampleLocker_Reentrant() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m := locker.Reentrant("account:7", "request-5f2a")
	outer, err := m.Lock(ctx, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer outer.Unlock(ctx)

	inner, err := m.TryLock(ctx, 10*time.Second) // same owner: granted
	if err != nil {
		log.Fatal(err)
	}
	inner.Unlock(ctx) // one hold left: still locked

	if _, err := locker.Reentrant("account:7", "request-9c1d").TryLock(ctx, 10*time.Second); errors.Is(err, redlock.ErrNotAcquired) {
		fmt.Println("inner unlock: still held by request-5f2a")
	}
	// Output: inner unlock: still held by request-5f2a
}

// Many readers or one writer; a waiting writer keeps new readers out.
func ExampleLocker_RWMutex() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	rw := locker.RWMutex("catalog")
	r1, err := rw.RLock(ctx, 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	r2, err := rw.RLock(ctx, 5*time.Second) // readers share it
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("two readers at once")
	// read the catalog
	r1.Unlock(ctx)
	r2.Unlock(ctx)

	w, err := rw.Lock(ctx, 5*time.Second) // waits for the readers to leave
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("then one writer")
	// rewrite the catalog
	w.Unlock(ctx)
	// Output:
	// two readers at once
	// then one writer
}

// Ask the masters, without extending the lock, whether they still hold it
// and for how long: a holder about to commit checks that it still may.
func ExampleLock_Check() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lk, err := locker.Lock(ctx, "report:7", 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	left, err := lk.Check(ctx)
	switch {
	case errors.Is(err, redlock.ErrLockLost):
		fmt.Println("do not commit: the masters no longer hold the lock")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("held for more than 20s:", left > 20*time.Second)
	}
	if err := lk.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = lk.Check(ctx)
	fmt.Println("after Unlock:", errors.Is(err, redlock.ErrLockLost))
	// Output:
	// held for more than 20s: true
	// after Unlock: true
}

// A sync.Locker for code written against one: here sync.Cond's.
func ExampleLocker_Mutex() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	m := locker.Mutex("ledger", 10*time.Second)
	var ready bool
	cond := sync.NewCond(m)
	go func() {
		m.Lock()
		ready = true
		m.Unlock()
		cond.Signal()
	}()
	m.Lock()
	for !ready {
		cond.Wait()
	}
	m.Unlock()
	fmt.Println("ready, lock released cleanly:", m.Err() == nil)
	// Output: ready, lock released cleanly: true
}

// One Locker for locks that want different things: a fenced lock beside a
// plain one, a bounded number of attempts, tokens that carry a request id.
func ExampleOption() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	fenced, err := locker.Lock(ctx, "ledger", 10*time.Second, redlock.WithFencing(true))
	if err != nil {
		log.Fatal(err)
	}
	plain, err := locker.Lock(ctx, "cache:warm", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fenced:", fenced.Fence() > 0, "plain:", plain.Fence() == 0)

	// Three attempts at most, then give up (the lock is held).
	_, err = locker.Lock(ctx, "ledger", 10*time.Second, redlock.WithMaxAttempts(3),
		redlock.WithToken(func(attempt int) string { return fmt.Sprintf("request-81/%d", attempt) }))
	fmt.Println("gave up while held:", errors.Is(err, redlock.ErrNotAcquired))

	fenced.Unlock(ctx)
	lk, err := locker.TryLock(ctx, "ledger", 10*time.Second,
		redlock.WithToken(func(attempt int) string { return fmt.Sprintf("request-82/%d", attempt) }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("token:", lk.Token())
	lk.Unlock(ctx)
	plain.Unlock(ctx)
	// Output:
	// fenced: true plain: true
	// gave up while held: true
	// token: request-82/1
}
