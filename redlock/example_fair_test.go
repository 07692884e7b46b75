package redlock_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Waiters, in this process or in others, get the lock in the order they
// asked for it: each draws a ticket from the masters, and the masters grant
// the lock only to the earliest ticket still waiting.
func ExampleLocker_Fair() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	report := locker.Fair("nightly-report")
	lk, err := report.Lock(ctx, 10*time.Second)
	if err != nil {
		log.Fatal(err) // errors.Is(err, context.DeadlineExceeded) when it waited in vain
	}
	fmt.Println("locked", lk.Key())

	// While it is held, TryLock is refused; the refused caller leaves the
	// queue at once.
	if _, err := report.TryLock(ctx, 10*time.Second); err != nil {
		fmt.Println("second caller: not acquired")
	}

	if err := lk.Unlock(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("unlocked")
	// Output:
	// locked nightly-report
	// second caller: not acquired
	// unlocked
}
