package bench

import (
	"fmt"
	"strings"
)

// Evaluate measures the report against the targets of the issue, for
// quorumlock at its defaults and then for each other configuration of
// quorumlock in the run. A target whose rows are missing from the run is
// reported as not known, never as met.
func (r *Report) Evaluate() []Target {
	var ts []Target
	for _, v := range []string{Ours, OursPooled} {
		if r.latency(v, r.Options.Nodes[0]) != nil {
			ts = append(ts, r.evaluateFor(v)...)
		}
	}
	return ts
}

// evaluateFor evaluates the targets for the implementation named ours; the
// target names carry its name unless it is quorumlock at its defaults.
func (r *Report) evaluateFor(ours string) []Target {
	var ts []Target
	add := func(name, goal string, known, met bool, format string, args ...any) {
		if ours != Ours {
			name = ours + ": " + name
		}
		ts = append(ts, Target{Name: name, Goal: goal, Value: fmt.Sprintf(format, args...), Met: known && met, Known: known})
	}

	// ratioTarget adds "ours vs peer" as x = num/den against bound, with
	// atMost telling the direction.
	ratioTarget := func(name, goal string, ok bool, num, den, bound float64, atMost bool, unit string) {
		if !ok || den == 0 {
			add(name, goal, false, false, "no data")
			return
		}
		x := num / den
		met := x >= bound
		if atMost {
			met = x <= bound
		}
		add(name, goal, true, met, "%.3fx (%s vs %s %s)", x, num3(num), num3(den), unit)
	}

	ours1, lock1 := r.latency(ours, 1), r.latency(Redislock, 1)
	ours5, rs5, raw5 := r.latency(ours, 5), r.latency(Redsync, 5), r.latency(Raw, 5)
	p50 := func(x *LatencyRow) float64 { return x.P50 }
	ratioTarget("uncontended p50, N=1, vs redislock", "<= 1.0x", has(ours1) && has(lock1), safe(ours1, p50), safe(lock1, p50), 1.0, true, "µs")
	ratioTarget("uncontended p50, N=5, vs redsync", "<= 0.70x", has(ours5) && has(rs5), safe(ours5, p50), safe(rs5, p50), 0.70, true, "µs")
	ratioTarget("uncontended p50, N=5, vs raw limit", "<= 1.0x", has(ours5) && has(raw5), safe(ours5, p50), safe(raw5, p50), 1.0, true, "µs")

	tput := func(impl string, n int) (float64, bool) {
		if row := r.throughput(impl, n, 64, 0); row != nil && row.PerSec > 0 {
			return row.PerSec, true
		}
		return 0, false
	}
	o5, ok1 := tput(ours, 5)
	s5, ok2 := tput(Redsync, 5)
	ratioTarget("throughput, 64 goroutines, N=5, vs redsync", ">= 2.0x", ok1 && ok2, o5, s5, 2.0, false, "cycles/s")
	o1, ok1 := tput(ours, 1)
	l1, ok2 := tput(Redislock, 1)
	ratioTarget("throughput, 64 goroutines, N=1, vs redislock", ">= 1.5x", ok1 && ok2, o1, l1, 1.5, false, "cycles/s")

	// The healthy p99 is the same client's just before the fault, or, in
	// a report without it, scenario (a)'s.
	if d := r.degraded(ours, 5, Frozen); d != nil && d.P99 > 0 && (d.Healthy.P99 > 0 || has(ours5)) {
		healthy := d.Healthy.P99
		if healthy == 0 {
			healthy = ours5.P99
		}
		x := d.P99 / healthy
		add("one of 5 frozen: p99 vs our healthy p99", "<= 2x", true, x <= 2 && !d.Hung, "%.3fx (%s vs %s µs)", x, us(d.P99), us(healthy))
		add("one of 5 frozen: frozen node visible to the caller", "visible", true, d.Visible, "%v", d.Visible)
	} else {
		add("one of 5 frozen: p99 vs our healthy p99", "<= 2x", false, false, "no data")
		add("one of 5 frozen: frozen node visible to the caller", "visible", false, false, "no data")
	}
	var hung, manyG, manyC []string
	var rows int
	for _, d := range r.Degraded {
		if d.Impl != ours {
			continue
		}
		rows++
		name := fmt.Sprintf("N=%d %s", d.Nodes, d.Fault)
		if d.Hung {
			hung = append(hung, name)
		}
		// One caller goroutine: a connection's writer and reader per
		// node, and a few that come and go (a dial, a report); nothing
		// that grows with the call rate.
		if d.Goroutines > 2*d.Nodes+4 {
			manyG = append(manyG, fmt.Sprintf("%s: %d", name, d.Goroutines))
		}
		if d.Conns > 2*d.Nodes {
			manyC = append(manyC, fmt.Sprintf("%s: %d", name, d.Conns))
		}
	}
	add("degraded (frozen, killed; N=3, 5): no hang", "none hung", rows > 0, len(hung) == 0, "%d of %d hung %s", len(hung), rows, strings.Join(hung, ", "))
	add("degraded: goroutines left at the end <= 2N+4", "bounded", rows > 0, len(manyG) == 0,
		"%d of %d over %s", len(manyG), rows, strings.Join(manyG, ", "))
	add("degraded: connections left at the end <= 2N", "bounded", rows > 0, len(manyC) == 0,
		"%d of %d over %s", len(manyC), rows, strings.Join(manyC, ", "))

	for _, n := range r.Options.Nodes {
		o, p := r.latency(ours, n), r.latency(Redsync, n)
		bound, goal := 0.5, "<= 0.5x"
		if n == 1 {
			bound, goal = 1.0, "<= 1.0x"
		}
		name := fmt.Sprintf("allocs per cycle, N=%d, vs redsync", n)
		if o != nil && p != nil && p.AllocsPerCycle > 0 && o.Count > 0 {
			x := o.AllocsPerCycle / p.AllocsPerCycle
			add(name, goal, true, x <= bound, "%.3fx (%.1f vs %.1f)", x, o.AllocsPerCycle, p.AllocsPerCycle)
		} else {
			add(name, goal, false, false, "no data")
		}
	}

	if ours == Ours {
		// The pipelined prototype is the floor of this design: how close
		// the production path comes to it; reported, not a target.
		if p5 := r.latency(Pipelined, 5); has(ours5) && has(p5) {
			f, ok := tput(Pipelined, 5)
			o, _ := tput(ours, 5)
			v := fmt.Sprintf("p50 %.3fx (%s vs %s µs)", ours5.P50/p5.P50, us(ours5.P50), us(p5.P50))
			if ok && o > 0 {
				v += fmt.Sprintf(", 64-goroutine throughput %.3fx (%.0f vs %.0f cycles/s)", o/f, o, f)
			}
			add("N=5 vs the pipelined prototype (the floor)", "report", true, true, "%s", v)
		}
	}

	for _, n := range r.Options.Nodes {
		o, p := r.contention(ours, n), r.contention(Redsync, n)
		known := o != nil && o.Acquisitions > 0
		if !known {
			o = &ContentionRow{}
		}
		add(fmt.Sprintf("contention, N=%d: no spurious failure", n), "0", known, o.Spurious == 0 && !o.Hung, "%d", o.Spurious)
		if known && p != nil && p.Wait.P99 > 0 {
			x := o.Wait.P99 / p.Wait.P99
			add(fmt.Sprintf("contention, N=%d: p99 wait vs redsync", n), "<= 0.1x", true, x <= 0.1,
				"%.3fx (%s vs %s µs)", x, us(o.Wait.P99), us(p.Wait.P99))
		} else {
			add(fmt.Sprintf("contention, N=%d: p99 wait vs redsync", n), "<= 0.1x", false, false, "no data")
		}
		add(fmt.Sprintf("contention, N=%d: smallest share vs mean", n), ">= 0.5", known, o.MinShareOfMean >= 0.5, "%.2f", o.MinShareOfMean)
		if ours == Ours {
			// What wake on release is worth, between clients that share
			// no Locker (separate processes); reported, not a target.
			if w, q := r.contention(OursApart, n), r.contention(OursApartPolling, n); w != nil && q != nil && !w.Hung && !q.Hung && q.Wait.P99 > 0 && q.Wait.P50 > 0 {
				add(fmt.Sprintf("contention, N=%d, separate clients: wait woken by release vs polling only", n), "report", true, true,
					"p50 %.3fx (%s vs %s µs), p99 %.3fx (%s vs %s µs)", w.Wait.P50/q.Wait.P50, us(w.Wait.P50), us(q.Wait.P50),
					w.Wait.P99/q.Wait.P99, us(w.Wait.P99), us(q.Wait.P99))
			}
			// The fair lock between separate clients (issue 12).
			f := r.contention(OursFair, n)
			fk := f != nil && f.Acquisitions > 0 && !f.Hung
			if fk && p != nil && p.Wait.P99 > 0 {
				x := f.Wait.P99 / p.Wait.P99
				add(fmt.Sprintf("contention, N=%d, separate clients, fair: p99 wait vs redsync", n), "<= 0.2x", true, x <= 0.2,
					"%.3fx (%s vs %s µs)", x, us(f.Wait.P99), us(p.Wait.P99))
			} else {
				add(fmt.Sprintf("contention, N=%d, separate clients, fair: p99 wait vs redsync", n), "<= 0.2x", false, false, "no data")
			}
			if !fk {
				f = &ContentionRow{}
			}
			add(fmt.Sprintf("contention, N=%d, separate clients, fair: smallest share vs mean", n), ">= 0.9", fk, f.MinShareOfMean >= 0.9, "%.2f", f.MinShareOfMean)
		}
	}
	return ts
}

func has(row *LatencyRow) bool { return row != nil && row.Count > 0 && row.P50 > 0 }

// safe returns f(row), or 0 for a nil row.
func safe(row *LatencyRow, f func(*LatencyRow) float64) float64 {
	if row == nil {
		return 0
	}
	return f(row)
}

// num3 formats a value like us does, for any unit.
func num3(v float64) string { return us(v) }
