package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/internal/guard"
)

// The runner survives the library it tests. A scenario's body runs on a
// goroutine of its own, under a watchdog: a body that has not returned
// when the watchdog fires (a call of the library that never returns, a
// deadlock) fails its scenario as hung, with the stacks of every
// goroutine of the process in its Result, and the suite goes on with the
// next scenario. The body's context is cancelled, and it is given a grace
// period to return; one that does not is abandoned: the runner finishes
// without it (it checks the history recorded so far, closes the clients'
// connections and removes the cluster, which usually wakes the stuck call
// with an error), and whatever the body does afterwards is dropped (Check,
// Logf) or refused (Env). A panic of the body, or of a goroutine the
// workload starts under guard.Go, fails its scenario the same way, with
// the panic's value and stack.

// DefaultWatchdog is the watchdog of a run whose random workloads last
// d: twice d (no scenario runs its workload longer than d), plus two
// minutes for the cluster, the probes and the checkers.
func DefaultWatchdog(d time.Duration) time.Duration { return 2*d + 2*time.Minute }

// hangGrace bounds how long a hung body is given to return once its
// context is cancelled, before the runner abandons it.
const hangGrace = 10 * time.Second

// closeWithin bounds each step of tearing a run down (closing the clients,
// removing the cluster): a library stuck in Close must not hang the suite.
const closeWithin = 30 * time.Second

// hangError is the error of a body that did not return within the
// watchdog.
type hangError struct {
	limit     time.Duration
	abandoned bool   // it did not return within the grace period either
	dump      []byte // every goroutine's stack when the watchdog fired
}

func (h *hangError) Error() string {
	s := fmt.Sprintf("scenario: hung: no end within the watchdog's %v", h.limit)
	if h.abandoned {
		s += fmt.Sprintf(", nor %v after its context was cancelled (abandoned)", min(hangGrace, h.limit))
	}
	return s
}

// watch runs the body under the watchdog and returns its error: a
// *guard.PanicError when it panicked, a *hangError when it hung.
func (r *Run) watch(ctx context.Context) error {
	limit := r.opts.Watchdog
	if limit <= 0 {
		limit = DefaultWatchdog(r.opts.Duration)
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done, ended, err := within(limit, func() error { return r.sc.run(bctx, r) })
	if ended {
		return err
	}
	h := &hangError{limit: limit, dump: guard.Dump()}
	cancel()
	grace := time.NewTimer(min(hangGrace, limit))
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		h.abandoned = true
	}
	return h
}

// within runs fn on a goroutine of its own (a panic becomes its error,
// guard.Call) and waits for it up to d: it returns true and fn's error
// when fn returned in time, else false and the channel that gets fn's
// error once it returns.
func within(d time.Duration, fn func() error) (done <-chan error, ended bool, err error) {
	c := make(chan error, 1)
	go func() { c <- guard.Call(fn) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-c:
		return c, true, err
	case <-t.C:
		return c, false, nil
	}
}

// aborted turns the hang or the panic that err carries into a failed
// check of the scenario (and its Result's Aborted and Dump), and returns
// nil for them; any other error is returned as it is.
func (r *Run) aborted(err error) error {
	var (
		h *hangError
		p *guard.PanicError
	)
	switch {
	case errors.As(err, &h):
		r.res.Aborted, r.res.Dump = h.Error(), string(h.dump)
		r.addCheck("ends within the watchdog", false, "%v; the stacks of %d goroutines are in the report",
			h, strings.Count(r.res.Dump, "\ngoroutine ")+1)
		return nil
	case errors.As(err, &p):
		r.res.Aborted, r.res.Dump = fmt.Sprintf("panicked: %v", p.Value), string(p.Stack)
		r.addCheck("no panic", false, "panic: %v (%v); its stack is in the report", p.Value, err)
		return nil
	}
	return err
}

// bounded runs step (closing something the library may be stuck in) for up
// to closeWithin, and returns its error; one that takes longer is left to
// run and noted.
func (r *Run) bounded(what string, step func() error) error {
	_, ended, err := within(closeWithin, step)
	if !ended {
		r.addCheck("torn down", false, "%s took over %v (left running)", what, closeWithin)
	}
	return err
}

// noViolation checks, for a safe scenario, that no invariant was violated
// in the whole run: each is a FAIL however the scenario's own checks read
// it, since a safe scenario's expected outcome is 0 overlaps and 0
// violations.
func (r *Run) noViolation(c checker.Result) {
	by := c.ByInvariant()
	total := 0
	var parts []string
	for _, inv := range checker.Invariants {
		total += by[inv]
		if by[inv] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", inv, by[inv]))
		}
	}
	detail := "none"
	if total > 0 {
		detail = strings.Join(parts, ", ")
		if len(c.Violations) > 0 {
			detail += "; first: " + c.Violations[0].String()
		}
	}
	r.addCheck("0 violations of any invariant", total == 0, "%s", detail)
}
