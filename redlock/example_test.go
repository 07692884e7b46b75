package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
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
	var locker *redlock.Locker // from redlock.New

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lk, err := locker.Lock(ctx, "invoice:42", 10*time.Second)
	if err != nil {
		log.Fatal(err) // errors.Is(err, context.DeadlineExceeded) when it waited in vain
	}
	defer lk.Unlock(context.Background())

	workCtx, stop := context.WithDeadline(ctx, lk.Until())
	defer stop()
	_ = workCtx // do the protected work with workCtx
}

// One attempt; tell "someone else holds it" from "too few masters answered".
func ExampleLocker_TryLock() {
	var locker *redlock.Locker // from redlock.New

	lk, err := locker.TryLock(context.Background(), "report:daily", time.Minute)
	var qerr *redlock.QuorumError
	switch {
	case err == nil:
		defer lk.Unlock(context.Background())
	case errors.As(err, &qerr) && qerr.Refused > 0:
		fmt.Println("held elsewhere:", qerr.Refused, "masters refused")
	default:
		fmt.Println("masters unavailable:", err)
	}
}

// Extend before Until passes; once it has passed the lock cannot be saved.
func ExampleLock_Extend() {
	var lk *redlock.Lock // from Locker.Lock

	if err := lk.Extend(context.Background(), 10*time.Second); errors.Is(err, redlock.ErrLockLost) {
		fmt.Println("stop working: the lock is no longer guaranteed")
	}
}

// Run a job under the lock, renewed while it runs; ctx is cancelled the
// moment the lock can no longer be guaranteed.
func ExampleLocker_Do() {
	var locker *redlock.Locker // from redlock.New

	err := locker.Do(context.Background(), "nightly-export", 30*time.Second, func(ctx context.Context) error {
		for batch := 0; batch < 100; batch++ {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx) // matches redlock.ErrLockLost if the lock was lost
			}
			// export one batch with ctx
		}
		return nil
	})
	if errors.Is(err, redlock.ErrLockLost) {
		log.Print("the export may have overlapped another run")
	}
}

// A holder that watches Done stops as soon as the lock is not guaranteed.
func ExampleLock_Done() {
	var lk *redlock.Lock // from Locker.Lock, with Config.AutoRenew

	select {
	case <-lk.Done():
		log.Print("stop: ", lk.Err())
	case <-time.After(time.Second):
		// still held (and renewed)
	}
}

// Pass the fencing token to the resource, which refuses tokens lower than
// the highest it has seen.
func ExampleLock_Fence() {
	var nodes []redlock.Node // five masters with AOF, appendfsync always
	locker, err := redlock.New(nodes, redlock.Config{Fencing: true})
	if err != nil {
		log.Fatal(err)
	}
	lk, err := locker.Lock(context.Background(), "ledger", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Unlock(context.Background())
	fmt.Printf("UPDATE ledger SET ..., fence = %d WHERE fence <= %d\n", lk.Fence(), lk.Fence())
}

// The same owner may take the lock again; each Unlock gives one hold back.
func ExampleLocker_Reentrant() {
	var locker *redlock.Locker // from redlock.New

	m := locker.Reentrant("account:7", "request-5f2a")
	outer, err := m.Lock(context.Background(), 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer outer.Unlock(context.Background())

	inner, err := m.TryLock(context.Background(), 10*time.Second) // same owner: granted
	if err != nil {
		log.Fatal(err)
	}
	inner.Unlock(context.Background()) // one hold left: still locked
}

// Many readers or one writer; a waiting writer keeps new readers out.
func ExampleLocker_RWMutex() {
	var locker *redlock.Locker // from redlock.New

	rw := locker.RWMutex("catalog")
	r, err := rw.RLock(context.Background(), 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	// read the catalog
	r.Unlock(context.Background())

	w, err := rw.Lock(context.Background(), 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	// rewrite the catalog
	w.Unlock(context.Background())
}
