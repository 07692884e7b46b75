package workload

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/internal/guard"
	"github.com/quorumlock/quorumlock/redlock"
)

// Config shapes the loop of Run.
type Config struct {
	// Kinds are the kinds of lock the clients exercise: each cycle of a
	// client picks one at random. Empty means Fenced only.
	Kinds []Kind
	// Keys is the number of lock keys per kind the clients share ("k0",
	// "k1", ... for Fenced); each cycle picks one at random. 0 means 1.
	Keys int
	// TTL of the locks. Inner reentrant holds take less, outer ones twice
	// as much; renewed holds last up to 2.5 TTLs; extends draw from [TTL/4,
	// 3 TTL].
	TTL time.Duration
	// Hold is the longest a holder works before it writes (uniform in [0,
	// Hold]).
	Hold time.Duration
	// Wait bounds one Lock call (it retries until then); 0 means 2s.
	Wait time.Duration
	// PausePastTTL is the probability that a Fenced holder pauses for
	// PauseFor (which should exceed TTL) before it writes, as a GC pause or
	// a stopped VM would; 0 means never.
	PausePastTTL float64
	PauseFor     time.Duration
	// LateBy is how long a client waits after a failed Extend for the
	// commands that may still land (a slow link's latency) before it
	// samples the masters again; 0 means 2 NodeTimeouts.
	LateBy time.Duration
	// Faults, if set, is injected beside the clients (Env.Faults.Run).
	Faults fault.Schedule
	// Seed drives the clients' choices (kinds, keys, hold times, pauses,
	// TTLs), so that a run can be replayed.
	Seed uint64
	// Echoes, if set, gets every client's ECHO calls, sent beside its
	// cycles (see Echoes).
	Echoes *Echoes
}

// Run runs every client of e, and the fault schedule cfg.Faults, side by
// side under one errgroup until ctx ends, then waits for the cycles in
// progress to finish (releases included). Each client loops over cycles of
// the kinds of cfg. The first error (a harness failure: a fault that could
// not be applied, a call the library refused as invalid) cancels the run
// and is returned; lock failures are what the faults are for and are only
// recorded. A panic on one of Run's goroutines is returned as a
// *guard.PanicError (guard.Go), so that it fails the scenario, not the
// process.
func Run(ctx context.Context, e *Env, cfg Config) error {
	if cfg.Keys <= 0 {
		cfg.Keys = 1
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 2 * time.Second
	}
	if cfg.LateBy <= 0 {
		cfg.LateBy = 2 * NodeTimeout
	}
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = []Kind{Fenced}
	}
	g, gctx := errgroup.WithContext(ctx)
	if len(cfg.Faults) > 0 {
		g.Go(guard.Go(func() error { return e.Faults.Run(gctx, cfg.Faults) }))
	}
	for _, c := range e.clients {
		if cfg.Echoes != nil {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(c.ID)+0xec40))
			g.Go(guard.Go(func() error {
				cfg.Echoes.echo(gctx, e, c.ID, rng)
				return nil
			}))
		}
		s := &step{c: c, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(c.ID))), cfg: cfg, bg: context.WithoutCancel(gctx)}
		g.Go(guard.Go(func() error {
			for gctx.Err() == nil {
				k := kinds[s.rng.IntN(len(kinds))]
				var err error
				cctx, cancel := cycleCtx(gctx, s.rng) // ends at a random point now and then
				if k == Fenced && cfg.PausePastTTL > 0 {
					err = c.cycle(cctx, s.rng, cfg)
				} else {
					err = s.run(cctx, k)
				}
				cancel()
				if err != nil {
					return err
				}
			}
			return nil
		}))
	}
	err := g.Wait()
	e.pending.Wait()
	return err
}

// cycle is one Lock, write, Unlock, with a pause past the TTL now and then.
func (c *Client) cycle(ctx context.Context, rng *rand.Rand, cfg Config) error {
	name := Fenced.name(rng.IntN(cfg.Keys))
	hold := time.Duration(rng.Int64N(int64(cfg.Hold) + 1))
	pause := rng.Float64() < cfg.PausePastTTL
	actx, cancel := callCtx(ctx, rng, cfg.Wait)
	h, err := c.Acquire(actx, name, cfg.TTL, false)
	cancel()
	if err != nil {
		return harness(err)
	}
	if pause {
		c.env.Pause(c.ID, cfg.PauseFor)
	} else {
		time.Sleep(hold)
	}
	h.Write()
	h.Release(ctx) // an error means a quorum no longer held it: nothing to do
	return nil
}

// errorsIsInvalid reports whether err is the library's refusal of bad
// input.
func errorsIsInvalid(err error) bool { return errors.Is(err, redlock.ErrInvalid) }
