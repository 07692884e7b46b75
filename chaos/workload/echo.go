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

// count counts one ECHO call of client c to addr, answered with reply or
// not.
func (x *Echoes) count(c int, addr, token, reply string, answered bool) {
	x.calls.Add(1)
	if !answered {
		return
	}
	x.answered.Add(1)
	if reply != token {
		x.mismatched.Add(1)
		x.mu.Lock()
		if x.first == "" {
			x.first = fmt.Sprintf("client %d, %s: ECHO %s got %q", c, addr, token, reply)
		}
		x.mu.Unlock()
	}
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
		// A fan-out of one completes by callback: the pool's ability; an
		// adapter's node gets Do calls only.
		p, async := n.(*pool.Node)
		if i%2 == 0 || !async {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			reply, err = redis.String(n.Do(cctx, "ECHO", token))
			cancel()
		} else {
			reply, err = echoFanOut(ctx, p, token, timeout)
		}
		x.count(c, n.Addr(), token, reply, err == nil)
		time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond) // leave the masters to the lock cycles too
	}
}

// echoFanOut sends ECHO token to n as a fan-out of one, which reads the
// reply on its own goroutine when n's connection is idle.
func echoFanOut(ctx context.Context, n *pool.Node, token string, timeout time.Duration) (string, error) {
	res, err := quorum.Async(ctx, 1, quorum.Options{Need: 1, Timeout: timeout}, func(ctx context.Context, i int, done quorum.Tally) {
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

// Probe drives, rounds times per client, the interleaving in which a
// transport could hand one caller's reply to another: over a link slowed
// by echoProbeLatency to master 0, a fan-out of one writes an ECHO on the
// idle connection, starts a second ECHO behind it, and is cancelled before
// it reads its reply, so that the connection's reader, holding the second
// command, must read the first reply first. Both replies are counted as
// the workload's ECHO calls are. The link is healed at the end. Then every
// link of every client must answer (everyLinkAnswers).
func (x *Echoes) Probe(ctx context.Context, e *Env, rounds int) error {
	for c := range e.clients {
		n, ok := e.nodes[c][0].(*pool.Node)
		if !ok {
			continue // the interleaving is the pool's: adapters complete no fan-out by callback
		}
		link := e.Net.Link(c, 0)
		if err := link.Slow(echoProbeLatency); err != nil {
			return err
		}
		for i := range rounds {
			first, behind := fmt.Sprintf("probe:%d:%d:first", c, i), fmt.Sprintf("probe:%d:%d:behind", c, i)
			replies := make(chan [2]string, 2) // a token and the reply it got
			answer := func(token string, reply any, err error) {
				s, _ := redis.String(reply, err)
				replies <- [2]string{token, s}
			}
			cctx, cancel := context.WithCancel(ctx)
			quorum.Async(cctx, 1, quorum.Options{Need: 1, Timeout: time.Minute}, func(nctx context.Context, j int, done quorum.Tally) {
				n.DoAsync(nctx, "ECHO", []any{first}, pool.CompletionFunc(func(reply any, err error) {
					done.Vote(j, quorum.Vote{Err: err})
					answer(first, reply, err)
				}))
				wctx, wcancel := context.WithTimeout(ctx, time.Minute)
				n.DoAsync(wctx, "ECHO", []any{behind}, pool.CompletionFunc(func(reply any, err error) {
					wcancel()
					answer(behind, reply, err)
				}))
				cancel() // before Async reads the first reply
			})
			// Both replies are due within the bound: each call still
			// pending then counts as a reply out of step (its connection
			// is stuck), and the probe goes on.
			late, stopLate := context.WithTimeout(ctx, echoProbeBound)
			for range 2 {
				var r [2]string
				select {
				case r = <-replies:
				case <-late.Done():
					if ctx.Err() != nil {
						stopLate()
						link.Heal()
						return ctx.Err()
					}
					r = [2]string{fmt.Sprintf("probe:%d:%d", c, i), fmt.Sprintf("no completion within %v", echoProbeBound)}
				}
				x.count(c, n.Addr(), r[0], r[1], r[1] != "")
			}
			stopLate()
		}
		link.Heal()
	}
	x.everyLinkAnswers(ctx, e)
	return nil
}

// everyLinkAnswers checks, once every fault is healed, that each client's
// connection to each master still answers an ECHO: a connection whose
// replies nobody reads any more (the transport lost its read turn) fails
// no call, it only leaves every call on it unanswered. A link gets
// linkTries calls, since the first call on a connection that a restart
// closed may be lost; one that answers none counts as a reply out of step.
func (x *Echoes) everyLinkAnswers(ctx context.Context, e *Env) {
	for c := range e.clients {
		for j, n := range e.nodes[c] {
			token := fmt.Sprintf("link:%d:%d", c, j)
			var err error
			for range linkTries {
				cctx, cancel := context.WithTimeout(ctx, linkWait)
				var reply string
				reply, err = redis.String(n.Do(cctx, "ECHO", token))
				cancel()
				if err == nil {
					x.count(c, n.Addr(), token, reply, true)
					break
				}
			}
			if err != nil {
				x.count(c, n.Addr(), token, fmt.Sprintf("no reply in %d tries of %v (last: %v)", linkTries, linkWait, err), true)
			}
		}
	}
}

// linkTries and linkWait bound everyLinkAnswers' calls on one link.
const (
	linkTries = 3
	linkWait  = time.Second
)

// echoProbeLatency is how late Probe's replies come: long enough for the
// reader to take the second command before the first read is given up.
const echoProbeLatency = 20 * time.Millisecond

// echoProbeBound is how long Probe waits for its calls to complete: far
// past the link's latency; a call still pending then counts as a reply
// out of step (a connection whose replies nobody reads any more).
const echoProbeBound = 5 * time.Second
