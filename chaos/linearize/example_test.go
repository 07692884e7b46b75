package linearize_test

import (
	"fmt"

	"github.com/quorumlock/quorumlock/chaos/linearize"
)

// Two clients hold "k" at once: client 2 is granted it at 40ms while client
// 1's hold, granted at 0, is released only at 50ms. A third call timed out;
// it may have been applied, but its caller never acted on it.
func ExampleCheck() {
	ops := []linearize.Op{
		{Kind: linearize.Acquire, Lock: 1, Client: 1, Key: "k", Call: 0, Return: 0, Outcome: linearize.Ok, Until: 100 * ms},
		{Kind: linearize.Release, Lock: 1, Client: 1, Call: 50 * ms, Return: 51 * ms, Outcome: linearize.Ok},
		{Kind: linearize.Acquire, Lock: 2, Client: 2, Key: "k", Call: 10 * ms, Return: 40 * ms, Outcome: linearize.Ok, Until: 140 * ms},
		{Kind: linearize.Acquire, Client: 3, Key: "k", Call: 5 * ms, Return: 90 * ms, Outcome: linearize.Unknown},
	}
	r, err := linearize.Check(ops, linearize.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Verdict, r.IllegalKeys())
	// Output: illegal [k]
}
