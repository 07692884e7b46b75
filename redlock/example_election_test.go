package redlock_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Two replicas of a service elect a leader; an observer follows who leads.
// The term grows with every new leader: pass it to what the leader acts
// on, so that a deposed leader is turned away.
func ExampleElection() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	replica := func() *redlock.Election {
		e, err := redlock.NewElection(locker, "scheduler", 10*time.Second)
		if err != nil {
			log.Fatal(err)
		}
		return e
	}
	a, b, watcher := replica(), replica(), replica()

	if err := a.Campaign(ctx, "replica-a:8080"); err != nil {
		log.Fatal(err)
	}
	octx, stop := context.WithCancel(ctx)
	defer stop()
	leaders := watcher.Observe(octx)
	first := <-leaders
	fmt.Println("leader:", first.Value)

	// b waits in Campaign until a resigns (or loses its lock); a's work runs
	// under a.Context(), which ends when its leadership does.
	elected := make(chan error, 1)
	go func() { elected <- b.Campaign(ctx, "replica-b:8080") }()
	if err := a.Resign(ctx); err != nil {
		log.Fatal(err)
	}
	if err := <-elected; err != nil {
		log.Fatal(err)
	}
	next := <-leaders
	fmt.Println("leader:", next.Value, "in a later term:", next.Term > first.Term)
	fmt.Println("a's leadership ended:", a.Context().Err() != nil)

	now, err := watcher.Leader(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a quorum says:", now.Value)
	b.Resign(ctx)
	// Output:
	// leader: replica-a:8080
	// leader: replica-b:8080 in a later term: true
	// a's leadership ended: true
	// a quorum says: replica-b:8080
}

// A lock that says who holds it: any process can ask a quorum of the
// masters, and redlock inspect prints it.
func ExampleWithMetadata() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lk, err := locker.Lock(ctx, "invoice:42", 10*time.Second,
		redlock.WithMetadata(map[string]string{"host": "web-3", "request": "r-81"}))
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Unlock(ctx)

	h, err := locker.Holder(ctx, "invoice:42")
	if err != nil {
		log.Fatal(err) // errors.Is(err, redlock.ErrNotHeld) when nobody holds it
	}
	fmt.Println("held by", h.Metadata["host"], "for", h.Metadata["request"], "on", h.Masters, "masters")
	fmt.Println("same lock:", h.Token == lk.Token())
	// Output:
	// held by web-3 for r-81 on 3 masters
	// same lock: true
}
