package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/quorum"
)

// Echoes checks that a client's connections keep replies in step with the
// commands under the faults: beside its lock cycles, each client sends
// ECHO calls with tokens of their own through its connections to the
// masters, under node timeouts short enough that callers often give up
// before their reply (a paused or slow master), which is when a transport
// could hand one caller's reply to another. Half are Do calls, half
// fan-outs of one (quorum.Async), the two ways a caller reads its own
// reply on an idle pipelined connection. A reply that is not the caller's
// own token is a mismatch.
type Echoes struct {
	calls, answered, mismatched atomic.Int64

	mu    sync.Mutex
	first string // the first mismatch
}

// EchoCounts are the totals of Echoes.
type EchoCounts struct {
	// Calls counts ECHO calls; Answered those that got a reply;
	// Mismatched the replies that were another call's.
	Calls, Answered, Mismatched int
	// First describes the first mismatch.
	First string
}

// Counts returns the totals so far.
func (x *Echoes) Counts() EchoCounts {
	x.mu.Lock()
	defer x.mu.Unlock()
	return EchoCounts{Calls: int(x.calls.Load()), Answered: int(x.answered.Load()),
		Mismatched: int(x.mismatched.Load()), First: x.first}
}

// echo runs client c's ECHO calls until ctx ends.
func (x *Echoes) echo(ctx context.Context, e *Env, c int, rng *rand.Rand) {
	nodes := e.nodes[c]
	for i := 0; ctx.Err() == nil; i++ {
		n := nodes[rng.IntN(len(nodes))]
		token := fmt.Sprintf("echo:%d:%d", c, i)
		timeout := time.Duration(2+rng.IntN(int(NodeTimeout/time.Millisecond))) * time.Millisecond
		var reply string
		var err error
		if i%2 == 0 {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			reply, err = redis.String(n.Do(cctx, "ECHO", token))
			cancel()
		} else {
			reply, err = echoFanOut(ctx, n, token, timeout)
		}
		x.calls.Add(1)
		if err == nil {
			x.answered.Add(1)
			if reply != token {
				x.mismatched.Add(1)
				x.mu.Lock()
				if x.first == "" {
					x.first = fmt.Sprintf("client %d, %s: ECHO %s got %q", c, n.Addr(), token, reply)
				}
				x.mu.Unlock()
			}
		}
		time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond) // leave the masters to the lock cycles too
	}
}

// echoFanOut sends ECHO token to n as a fan-out of one, which reads the
// reply on its own goroutine when n's connection is idle.
func echoFanOut(ctx context.Context, n *pool.Node, token string, timeout time.Duration) (string, error) {
	res, err := quorum.Async(ctx, 1, quorum.Options{Need: 1, Timeout: timeout}, func(ctx context.Context, i int, done quorum.Done) {
		n.DoAsync(ctx, "ECHO", []any{token}, pool.CompletionFunc(func(reply any, err error) {
			s, err := redis.String(reply, err)
			done.Vote(i, quorum.Vote{Yes: err == nil, Value: s, Err: err})
		}))
	})
	if err != nil {
		return "", err
	}
	if v := res.Votes[0]; v.Err != nil || !res.Answered[0] {
		return "", fmt.Errorf("workload: no echo: %v", v.Err)
	}
	return res.Votes[0].Value.(string), nil
}
