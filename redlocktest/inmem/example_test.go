package inmem_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest/inmem"
)

// runReport is code under test: it produces the daily report unless
// another instance holds the lock.
func runReport(ctx context.Context, locker *redlock.Locker) (string, error) {
	lk, err := locker.TryLock(ctx, "report:daily", time.Minute)
	if errors.Is(err, redlock.ErrNotAcquired) {
		return "skipped: another instance runs it", nil
	}
	if err != nil {
		return "", err
	}
	defer lk.Unlock(context.Background())
	return "report written", nil
}

// Test code that takes locks without a redis-server: three in-memory
// masters, a Locker over them, and the code under test. In a test, use
// inmem.New(t, 3), which closes the masters when the test ends.
func Example() {
	masters, err := inmem.Start(3)
	if err != nil {
		log.Fatal(err)
	}
	defer masters.Close()
	locker, err := redlock.New(masters.Nodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	fmt.Println(runReport(ctx, locker))

	// Another instance holds the lock: the code under test must skip.
	other, err := locker.TryLock(ctx, "report:daily", time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(runReport(ctx, locker))
	other.Unlock(ctx)

	fmt.Println(runReport(ctx, locker))
	// Output:
	// report written <nil>
	// skipped: another instance runs it <nil>
	// report written <nil>
}

// A waiter in another process wakes as soon as the holder releases the
// lock: the in-memory masters announce releases over pub/sub, as Redis
// does, so wake on release can be tested too.
func Example_wakeOnRelease() {
	masters, err := inmem.Start(3)
	if err != nil {
		log.Fatal(err)
	}
	defer masters.Close()
	holder, _ := redlock.New(masters.Nodes(), redlock.Config{})
	// The waiter's backoff is an hour: only the release announcement can
	// wake it in time.
	waiter, _ := redlock.New(masters.Nodes(), redlock.Config{
		Retry: redlock.RetryFunc(func(int) time.Duration { return time.Hour }),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	lk, err := holder.TryLock(ctx, "job:42", time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error)
	go func() {
		next, err := waiter.Lock(ctx, "job:42", time.Minute)
		if err == nil {
			fmt.Println("waiter got the lock")
			next.Unlock(ctx)
		}
		done <- err
	}()
	fmt.Println("holder releases")
	lk.Unlock(ctx)
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// holder releases
	// waiter got the lock
}

// Readers share a read-write lock, a writer waits for them; the scripts
// are the library's own, run by the in-memory masters.
func Example_readWrite() {
	masters, err := inmem.Start(3)
	if err != nil {
		log.Fatal(err)
	}
	defer masters.Close()
	locker, _ := redlock.New(masters.Nodes(), redlock.Config{})
	ctx := context.Background()
	m := locker.RWMutex("{config}")

	r1, err1 := m.TryRLock(ctx, time.Minute)
	r2, err2 := m.TryRLock(ctx, time.Minute)
	fmt.Println("two readers:", err1 == nil && err2 == nil)
	_, err = m.TryLock(ctx, time.Minute)
	fmt.Println("writer while reading:", errors.Is(err, redlock.ErrNotAcquired))
	r1.Unlock(ctx)
	r2.Unlock(ctx)
	w, err := m.TryLock(ctx, time.Minute)
	fmt.Println("writer after the readers:", err == nil)
	w.Unlock(ctx)
	// Output:
	// two readers: true
	// writer while reading: true
	// writer after the readers: true
}
