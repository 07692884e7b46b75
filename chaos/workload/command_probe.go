package workload

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// The command's probes: after the random phase, three fixed cases, each
// run once in every run of the scenario, so that every path to a job that
// outlives its lock is taken whatever the seed drew. In each, a first
// redlock runs a job on a key of its own, and a second one, started once
// that job runs, waits for the key (up to 3 TTLs) and runs a short job: if
// a process of the first job still runs when the second starts, the second
// records an overlap.
//
//	kill       the first job ignores SIGTERM and its worker called setsid;
//	           redlock is killed with SIGKILL as soon as the job runs
//	           (--kill-after 1m: only the lock's validity bounds the job)
//	cut        the first job's leader dies of SIGTERM, its worker (in the
//	           group) ignores it; the slot is cut off from every master as
//	           soon as the job runs, so the lock is lost (exit 75)
//	leftovers  the first job's leader exits at once (status 0) and leaves its
//	           worker, which ignores SIGTERM, behind

// CommandProbeSlots is how many slots the probes use at once.
const CommandProbeSlots = 4

// commandProbe is one probe: the first run, its slot and how it must end,
// and the second run's slot.
type commandProbe struct {
	name          string
	first         runSpec
	want          string
	slot, another int
}

// probes runs the probes side by side, on slots that do not disturb each
// other (the cut probe's first slot is no other probe's).
func (r *commandRun) probes(ctx context.Context) error {
	cfg := r.cfg
	ps := []commandProbe{
		{name: "kill", slot: 0, another: 1, want: endKilled,
			first: runSpec{hold: cfg.LongHold, killAfter: time.Minute, term: "ignore", worker: "setsid", fate: fateKill}},
		{name: "cut", slot: 2, another: 3, want: endLost,
			first: runSpec{hold: cfg.LongHold, killAfter: cfg.KillAfter, term: "exit", worker: "group", fate: fateCut}},
		{name: "leftovers", slot: 1, another: 0, want: endDone,
			first: runSpec{killAfter: cfg.KillAfter, term: "ignore", worker: "group"}},
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, p := range ps {
		g.Go(func() error { return r.probe(gctx, p) })
	}
	return g.Wait()
}

// probe runs p and notes in the stats whether its runs ended as they must.
func (r *commandRun) probe(ctx context.Context, p commandProbe) error {
	key := r.e.Key("probe-" + p.name)
	first := p.first
	first.key, first.wait = key, r.cfg.Wait
	s := r.slot[p.slot]
	id := r.newID(s)
	done := make(chan struct{})
	var end string
	var err error
	go func() {
		defer close(done)
		end, err = r.runAs(s, id, first)
	}()
	for !r.c.started(id, first.worker != "none") && waitOrClosed(done, 5*time.Millisecond) {
	}
	second := runSpec{key: key, killAfter: r.cfg.KillAfter, wait: 3 * r.cfg.TTL, term: "exit", worker: "none"}
	end2, err2 := r.run(r.slot[p.another], second)
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Probes = append(r.stats.Probes, p.name)
	if end != p.want || end2 != endDone {
		r.stats.ProbeFailures = append(r.stats.ProbeFailures,
			fmt.Sprintf("%s: the first run %s (want %s), the second %s (want %s)", p.name, end, p.want, end2, endDone))
	}
	if err != nil {
		return err
	}
	return err2
}
