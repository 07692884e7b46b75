package valkeygo_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/adapters/valkeygo"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/valkey-io/valkey-go"
)

// Two services run one job over three independent masters, each through
// valkey-go clients of its own, with the default Config (the restart
// guard on: the Nodes made by Open know which master process answers
// them). Locker.Do holds the lock while the job runs; the second service,
// trying meanwhile, finds it taken, and runs the job once the first is
// done.
func Example_threeMasters() {
	ctx := context.Background()
	first, stopFirst := openLocker(masters...)
	defer stopFirst()
	second, stopSecond := openLocker(masters...)
	defer stopSecond()

	report := func(service string) func(context.Context) error {
		return func(ctx context.Context) error {
			fmt.Println(service, "runs the report")
			return nil
		}
	}
	err := first.Do(ctx, "nightly-report", 10*time.Second, func(ctx context.Context) error {
		if _, err := second.TryLock(ctx, "nightly-report", 10*time.Second); errors.Is(err, redlock.ErrNotAcquired) {
			fmt.Println("second service: taken")
		}
		return report("first service")(ctx)
	})
	if err == nil {
		err = second.Do(ctx, "nightly-report", 10*time.Second, report("second service"))
	}
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// second service: taken
	// first service runs the report
	// second service runs the report
}

// A service starts while one of its three masters is down: Open makes
// each Node's client at its first call, so the Locker is built at once,
// and the job runs under a lock granted by the two masters that answer.
func Example_masterDown() {
	locker, stop := openLocker(masters[0], masters[1], down)
	defer stop()

	err := locker.Do(context.Background(), "nightly-report", 10*time.Second, func(context.Context) error {
		fmt.Println("ran with two of three masters")
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// ran with two of three masters
}

// openLocker returns a Locker over one Node per master address, each made
// by Open (a valkey-go client of its own, made at its first call), and a
// function to run before the process exits: it closes the Locker, which
// waits for the releases still in flight, then the Nodes and their
// clients.
func openLocker(addrs ...string) (*redlock.Locker, func()) {
	nodes := make([]redlock.Node, len(addrs))
	for i, addr := range addrs {
		n, err := valkeygo.Open(valkey.ClientOption{InitAddress: []string{addr}})
		if err != nil {
			log.Fatal(err) // an option under which a lock command could be sent twice
		}
		nodes[i] = n
	}
	locker, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	return locker, func() {
		locker.Close(context.Background())
		for _, n := range nodes {
			n.(*valkeygo.Node).Close()
		}
	}
}
