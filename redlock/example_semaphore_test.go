package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// At most two exports run at once, across every process that uses the
// masters: two permits are handed out, a third try is refused, and once one
// holder unlocks, a waiting Acquire gets its permit.
func ExampleSemaphore() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	exports := locker.Semaphore("exports", 2)

	a, err := exports.TryAcquire(ctx, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	b, err := exports.TryAcquire(ctx, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("two holders on different permits:", a.Permit() != b.Permit())

	_, err = exports.TryAcquire(ctx, time.Minute)
	fmt.Println("third refused:", errors.Is(err, redlock.ErrNotAcquired))

	if err := a.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := exports.Acquire(wctx, time.Minute) // waits for a free permit
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after an unlock, the waiter gets the released permit:", a.Permit() == c.Permit())

	for _, lk := range []*redlock.Lock{b, c} {
		if err := lk.Unlock(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// two holders on different permits: true
	// third refused: true
	// after an unlock, the waiter gets the released permit: true
}
