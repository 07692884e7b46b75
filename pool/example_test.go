package pool_test

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/pool"
)

// One master with a password; every call is bounded by its context.
func ExampleNew() {
	node := pool.New(pool.Config{Addr: "redis-a:6379", Password: "secret", MaxActive: 64})
	defer node.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	reply, err := node.Do(ctx, "PING")
	fmt.Println(reply, err)
}
