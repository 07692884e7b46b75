package goredis_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/adapters/goredis"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/redis/go-redis/v9"
)

// Two services take turns holding a lock over three independent Redis
// masters, each through its own go-redis clients. The second waits while
// the first holds the lock and is woken by the first's release (pub/sub),
// not by its retry backoff.
func Example_threeMasters() {
	ctx := context.Background()
	first, closeFirst := newLocker(masters)
	defer closeFirst()
	second, closeSecond := newLocker(masters)
	defer closeSecond()

	lock, err := first.Lock(ctx, "nightly-report", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first service holds the lock")

	got := make(chan *redlock.Lock)
	go func() {
		lock, err := second.Lock(ctx, "nightly-report", 10*time.Second) // waits
		if err != nil {
			log.Fatal(err)
		}
		got <- lock
	}()
	if err := lock.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	lock = <-got
	fmt.Println("second service holds the lock")
	lock.Unlock(ctx)
	// Output:
	// first service holds the lock
	// second service holds the lock
}

// newLocker returns a Locker over one go-redis client per master address
// (the default Config: the restart guard on), and a function that closes
// them: the Locker first, which waits for the releases still in flight,
// then the Nodes and the clients.
func newLocker(addrs []string) (*redlock.Locker, func()) {
	var (
		nodes   []redlock.Node
		closers []func() error
	)
	for _, addr := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		node, err := goredis.New(rdb)
		if err != nil {
			log.Fatal(err) // a Ring, or several masters in one client
		}
		nodes = append(nodes, node)
		closers = append(closers, node.Close, rdb.Close)
	}
	locker, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	return locker, func() {
		locker.Close(context.Background())
		for _, c := range closers {
			c()
		}
	}
}
