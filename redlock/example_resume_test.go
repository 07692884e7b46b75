package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// A scheduler takes the lock and hands its token to a worker, which
// resumes the lock, works and unlocks it. A token that no quorum holds
// resumes nothing.
func ExampleLocker_Resume() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew;
	// the scheduler and the worker are two processes.
	nodes := exampleNodes()
	scheduler, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	worker, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	lk, err := scheduler.Lock(ctx, "import:2024-06", time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	token := lk.Token() // sent to the worker with the job; the scheduler lets go of lk

	job, err := worker.Resume(ctx, "import:2024-06", token, 5*time.Minute)
	if err != nil {
		log.Fatal(err) // matches redlock.ErrNotAcquired: the lock was lost meanwhile
	}
	fmt.Println("worker holds", job.Key())
	if err := job.Unlock(ctx); err != nil {
		log.Fatal(err)
	}

	_, err = worker.Resume(ctx, "import:2024-06", token, 5*time.Minute)
	fmt.Println("after unlock:", errors.Is(err, redlock.ErrNotAcquired))
	// Output:
	// worker holds import:2024-06
	// after unlock: true
}
