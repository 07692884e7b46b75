package checker_test

import (
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

// Two waiters of a fair lock: client 1 called at 0 and was seen registered
// on a quorum of the masters at 5ms; client 2 called at 10ms, after that,
// yet was granted at 100ms, while client 1 still waited (it was granted at
// 200ms). The fair lock served them out of order.
func ExampleOutOfOrder() {
	ms := time.Millisecond
	events := []checker.Event{
		{Kind: checker.Registered, Client: 1, Key: "fair", Call: 0, At: 5 * ms},
		{Kind: checker.Granted, Lock: 2, Client: 2, Key: "fair", Call: 10 * ms, At: 100 * ms, Until: 300 * ms, Waits: true},
		{Kind: checker.Granted, Lock: 1, Client: 1, Key: "fair", Call: 0, At: 200 * ms, Until: 400 * ms, Waits: true},
	}
	for _, v := range checker.OutOfOrder(events) {
		fmt.Println(v.Invariant, v.Key, "lock", v.Lock, "at", v.At)
	}
	// Output:
	// fair-order fair lock 2 at 100ms
}
