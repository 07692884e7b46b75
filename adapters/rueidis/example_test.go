package rueidis_test

import (
	"context"
	"fmt"
	"log"
	"time"

	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/redis/rueidis"
)

// Two services take turns holding a lock over three independent Redis
// masters, each through its own rueidis clients. The second waits while
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

// A service starts while one of its three masters is down: Open makes
// each Node's client at its first call, so the Locker is built at once,
// and locks are taken with the two masters that answer.
func Example_masterDown() {
	ctx := context.Background()
	locker, closeAll := newLocker([]string{masters[0], masters[1], down})
	defer closeAll()

	lock, err := locker.Lock(ctx, "nightly-report", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("locked with two of three masters")
	lock.Unlock(ctx)
	// Output:
	// locked with two of three masters
}

// newLocker returns a Locker over one Node per master address, each with
// a rueidis client of its own, made at its first call, and a function
// that closes them: the Locker first, which waits for the releases still
// in flight, then the Nodes and their clients.
func newLocker(addrs []string) (*redlock.Locker, func()) {
	var nodes []redlock.Node
	for _, addr := range addrs {
		node, err := rueidisnode.Open(rueidis.ClientOption{InitAddress: []string{addr}})
		if err != nil {
			log.Fatal(err) // an option under which a lock command could be sent twice
		}
		nodes = append(nodes, node)
	}
	locker, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	closeAll := func() {
		locker.Close(context.Background())
		for _, n := range nodes {
			n.(*rueidisnode.Node).Close()
		}
	}
	return locker, closeAll
}
