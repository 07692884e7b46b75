package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes r as plain-text tables, one per scenario, then the
// targets. Each peer row carries quorumlock's ratio against it.
func (r *Report) WriteTable(w io.Writer) error {
	b := &strings.Builder{}
	e := r.Env
	fmt.Fprintf(b, "quorumlock benchmarks: %s %s/%s, %d CPUs, %s\n", e.GoVersion, e.GOOS, e.GOARCH, e.NumCPU, e.Redis)
	fmt.Fprintf(b, "started %s, wall %s, load average %s at the start, %s at the end\n", r.Started.Format(time.RFC3339),
		(time.Duration(r.WallSeconds * float64(time.Second))).Round(time.Second), e.LoadStart, e.LoadEnd)
	if e.StealPercent != nil {
		fmt.Fprintf(b, "CPU steal (the hypervisor running other guests) over the run: %s of the CPUs' time\n", percent(e.StealPercent))
	}
	b.WriteString("ours/x: quorumlock's value divided by the row's (times, allocations: below 1 is better; rates: above 1 is better)\n")

	section := func(title, header string) *tabwriter.Writer {
		fmt.Fprintf(b, "\n%s\n", title)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, header)
		return tw
	}

	tw := section("(a) uncontended lock+unlock, 1 goroutine, µs; (e) allocations per cycle; goroutines: the most the library ran beside the caller's;\n"+
		"    steal: the CPU steal during the row's turns",
		"N\timpl\tcycles\tp50\tp90\tp99\tp99.9\tmax\terrors\tallocs\tbytes\tgoroutines\tsteal\tours/x p50\tp99\tallocs\t")
	for i := range r.Latency {
		row := &r.Latency[i]
		o := r.latency(Ours, row.Nodes)
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.0f\t%d\t%s\t%s\t%s\t%s\t\n",
			row.Nodes, row.Impl, row.Count, us(row.P50), us(row.P90), us(row.P99), us(row.P999), us(row.Max),
			errs(row.Errors, row.Hung), row.AllocsPerCycle, row.BytesPerCycle, row.Goroutines, percent(row.StealPercent),
			ratio(o, row, func(x *LatencyRow) float64 { return x.P50 }),
			ratio(o, row, func(x *LatencyRow) float64 { return x.P99 }),
			ratio(o, row, func(x *LatencyRow) float64 { return x.AllocsPerCycle }))
	}
	tw.Flush()

	tw = section("(b) throughput, lock+unlock cycles/s: a key per goroutine, or goroutines sharing keys; allocations per cycle;\n"+
		"    goroutines: the most the library ran beside the callers",
		"N\tgoroutines\tkeys\timpl\tcycles/s\terrors\tallocs\tgoroutines\tours/x\tallocs\t")
	for i := range r.Throughput {
		row := &r.Throughput[i]
		o := r.throughput(Ours, row.Nodes, row.Goroutines, row.Keys)
		keys := "each"
		if row.Keys > 0 {
			keys = fmt.Sprint(row.Keys)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%.0f\t%s\t%.1f\t%d\t%s\t%s\t\n", row.Nodes, row.Goroutines, keys, row.Impl, row.PerSec, errs(row.Errors, row.Hung),
			row.AllocsPerCycle, row.ExtraGoroutines,
			ratio(o, row, func(x *ThroughputRow) float64 { return x.PerSec }),
			ratio(o, row, func(x *ThroughputRow) float64 { return x.AllocsPerCycle }))
	}
	tw.Flush()

	hold := time.Millisecond
	if len(r.Contention) > 0 {
		hold = time.Duration(r.Contention[0].HoldMicros * float64(time.Microsecond))
	}
	tw = section(fmt.Sprintf("(c) contention: %d clients on one key, each holds it %s; wait from Lock call to lock held, µs", r.Options.Clients, hold),
		"N\timpl\tacq/s\twait p50\tp99\tmax\tspurious\tmin share/mean\tshares %\tours/x acq/s\tp99 wait\t")
	for i := range r.Contention {
		row := &r.Contention[i]
		o := r.contention(Ours, row.Nodes)
		shares := make([]string, len(row.Shares))
		for i, s := range row.Shares {
			shares[i] = fmt.Sprintf("%.0f", 100*s)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t\n", row.Nodes, row.Impl, row.PerSec,
			us(row.Wait.P50), us(row.Wait.P99), us(row.Wait.Max), errs(row.Spurious, row.Hung), row.MinShareOfMean,
			strings.Join(shares, " "),
			ratio(o, row, func(x *ContentionRow) float64 { return x.PerSec }),
			ratio(o, row, func(x *ContentionRow) float64 { return x.Wait.P99 }))
	}
	tw.Flush()

	tw = section("(d) degraded: the last node frozen (SIGSTOP) or killed; lock+unlock, 1 goroutine, µs; healthy: the same client just before the fault;\n"+
		"    goroutines and connections left at the end",
		"N\tfault\timpl\tcycles\thealthy p99\tp50\tp99\tmax\terrors\tgoroutines\tconns (faulty)\tvisible\tp99/healthy p99\tours/x p50\tp99\t")
	for i := range r.Degraded {
		row := &r.Degraded[i]
		o := r.degraded(Ours, row.Nodes, row.Fault)
		healthy := "-"
		if row.Healthy.P99 > 0 && row.P99 > 0 {
			healthy = fmt.Sprintf("%.1fx", row.P99/row.Healthy.P99)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d (%d)\t%v\t%s\t%s\t%s\t\n",
			row.Nodes, row.Fault, row.Impl, row.Count, us(row.Healthy.P99), us(row.P50), us(row.P99), us(row.Max), errs(row.Errors, row.Hung),
			row.Goroutines, row.Conns, row.FaultyConns, row.Visible, healthy,
			ratio(o, row, func(x *DegradedRow) float64 { return x.P50 }),
			ratio(o, row, func(x *DegradedRow) float64 { return x.P99 }))
	}
	tw.Flush()

	fmt.Fprintf(b, "\ntargets\n")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tgoal\tvalue\tstatus")
	for _, t := range r.Targets {
		status := "met"
		if t.Goal == "report" {
			status = "measured"
		}
		switch {
		case !t.Known:
			status = "unknown"
		case !t.Met:
			status = "NOT MET"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Goal, t.Value, status)
	}
	tw.Flush()

	_, err := io.WriteString(w, b.String())
	return err
}

// us formats microseconds with three significant digits or so.
func us(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// percent formats a share in percent, or "-" when unknown.
func percent(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *p)
}

// errs formats an error count, or "hung".
func errs(n int64, hung bool) string {
	if hung {
		return "hung"
	}
	return fmt.Sprint(n)
}

// ratio formats f(ours)/f(row), or "" on ours' own row and "-" where
// either is missing.
func ratio[T any](ours, row *T, f func(*T) float64) string {
	if ours == row {
		return ""
	}
	if ours == nil || f(ours) == 0 || f(row) == 0 {
		return "-"
	}
	x := f(ours) / f(row)
	if x < 0.1 {
		return fmt.Sprintf("%.2gx", x)
	}
	return fmt.Sprintf("%.2fx", x)
}
