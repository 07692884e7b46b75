package fault

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"
)

// Run applies the faults of s in order, each at its offset from now or, when
// the faults before it took longer than planned (a container can take
// seconds to start), right after them. Faults are applied one at a time, so
// that at no moment are more of them in force than the schedule has at
// that point of its order: a slow start never overlaps the next kill.
//
// A Restart is applied in two steps on that timeline: the kill at its
// offset, the start Arg later. The faults the schedule places within its
// delay (on other nodes: Random counts the node faulty until then) go in
// on time, instead of waiting the whole delay behind it, and a slow start
// still holds back the faults after it. The restart is logged once, from
// the kill to the end of the start; one whose start the run's end cut off
// is logged as injected, with a note, and HealAll starts the node.
//
// Run returns when every fault is applied or ctx ends; it returns the
// errors of the faults that failed (they are in the log too), not ctx's.
func (in *Injector) Run(ctx context.Context, s Schedule) error {
	start := time.Now()
	steps := stepsOf(s)
	var errs []error
	defer in.cutOff(steps)
	for _, st := range steps {
		t := time.NewTimer(time.Until(start.Add(st.at)))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(errs...)
		case <-t.C:
		}
		if err := in.step(ctx, st); err != nil && ctx.Err() == nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// A runStep is one step of Run: a fault to Apply, or one of the two steps
// of a restart.
type runStep struct {
	at    time.Duration
	f     Fault
	r     *restart // a Restart's step; f is unused
	start bool     // the restart's second step
}

// restart is the state of a Restart that Run applies in two steps.
type restart struct {
	f      Fault
	begun  time.Duration // when the kill began, on the run's timeline
	killed bool          // the kill succeeded and the start has not been logged
}

// stepsOf returns the steps of s in the order of their offsets (a
// restart's start after the faults of the same offset scheduled before
// it).
func stepsOf(s Schedule) []runStep {
	steps := make([]runStep, 0, len(s))
	for _, f := range s {
		if f.Kind != Restart {
			steps = append(steps, runStep{at: f.At, f: f})
			continue
		}
		r := &restart{f: f}
		steps = append(steps, runStep{at: f.At, r: r}, runStep{at: f.At + f.Arg, r: r, start: true})
	}
	slices.SortStableFunc(steps, func(a, b runStep) int { return cmp.Compare(a.at, b.at) })
	return steps
}

// step applies st.
func (in *Injector) step(ctx context.Context, st runStep) error {
	r := st.r
	switch {
	case r == nil:
		return in.Apply(ctx, st.f)
	case !st.start:
		if err := in.noNode(r.f); err != nil {
			return err // and the start step does nothing
		}
		r.begun = time.Since(in.base)
		if _, err := in.apply(ctx, Fault{Kind: Kill, Node: r.f.Node}); err != nil {
			return in.logged(r.f, r.begun, "", err)
		}
		r.killed = true
		return nil
	case r.killed:
		r.killed = false
		_, err := in.apply(ctx, Fault{Kind: Start, Node: r.f.Node})
		return in.logged(r.f, r.begun, "", err)
	}
	return nil // the kill failed (and was logged) or was refused
}

// cutOff logs the restarts of steps whose kill went in and whose start the
// end of the run cut off.
func (in *Injector) cutOff(steps []runStep) {
	for _, st := range steps {
		if st.r != nil && st.start && st.r.killed {
			st.r.killed = false
			in.logged(st.r.f, st.r.begun, "the run ended before the start (HealAll starts the node)", nil)
		}
	}
}
