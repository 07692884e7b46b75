package nodeutil_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// A Node makes its client at its first call, so that it can be built while
// its master is down; the calls fail meanwhile, and work once the client
// can be made.
func ExampleLazy() {
	up := false
	client := nodeutil.NewLazy(func() (string, error) {
		if !up {
			return "", errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
		}
		return "client of 127.0.0.1:6379", nil
	})
	defer client.Close(func(string) {})

	ctx := context.Background()
	_, err := client.Get(ctx)
	fmt.Println(err)
	up = true
	c, err := client.Get(ctx)
	fmt.Println(c, err)
	// Output:
	// dial tcp 127.0.0.1:6379: connect: connection refused
	// client of 127.0.0.1:6379 <nil>
}

// Arguments go to the master as redigo sends them.
func ExampleAppendArgs() {
	fmt.Printf("%q\n", nodeutil.AppendArgs([]string{"SET"}, []any{"lock", []byte("token"), "PX", 10000, "NX", true}))
	// Output: ["SET" "lock" "token" "PX" "10000" "NX" "1"]
}
