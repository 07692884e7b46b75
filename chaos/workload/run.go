package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Config shapes the loop of Run.
type Config struct {
	// Keys is the number of lock keys the clients share ("k0", "k1", ...);
	// each client picks one at random per cycle. 0 means 1.
	Keys int
	// TTL of every lock.
	TTL time.Duration
	// Hold is the longest a holder works before it writes (uniform in [0,
	// Hold]).
	Hold time.Duration
	// Wait bounds one Lock call (it retries until then); 0 means 2s.
	Wait time.Duration
	// PausePastTTL is the probability that a holder pauses for PauseFor
	// (which should exceed TTL) before it writes, as a GC pause or a
	// stopped VM would; 0 means never.
	PausePastTTL float64
	PauseFor     time.Duration
	// Seed drives the clients' choices (keys, hold times, pauses).
	Seed uint64
}

// Run runs every client of e in a loop of Lock, write, Unlock until ctx
// ends, then waits for the cycles in progress to finish (releases included).
func Run(ctx context.Context, e *Env, cfg Config) {
	if cfg.Keys <= 0 {
		cfg.Keys = 1
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 2 * time.Second
	}
	var wg sync.WaitGroup
	for _, c := range e.clients {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(c.ID)))
		wg.Go(func() {
			for ctx.Err() == nil {
				c.cycle(ctx, rng, cfg)
			}
		})
	}
	wg.Wait()
}

// cycle is one Lock, write, Unlock.
func (c *Client) cycle(ctx context.Context, rng *rand.Rand, cfg Config) {
	name := fmt.Sprintf("k%d", rng.IntN(cfg.Keys))
	hold := time.Duration(rng.Int64N(int64(cfg.Hold) + 1))
	pause := cfg.PausePastTTL > 0 && rng.Float64() < cfg.PausePastTTL
	actx, cancel := context.WithTimeout(ctx, cfg.Wait)
	h, err := c.Acquire(actx, name, cfg.TTL, false)
	cancel()
	if err != nil {
		return
	}
	if pause {
		c.env.Pause(c.ID, cfg.PauseFor)
	} else {
		time.Sleep(hold)
	}
	h.Write()
	h.Release(ctx) // an error means a quorum no longer held it: nothing to do
}
