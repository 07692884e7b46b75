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
