package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

// What durable grants cost (redlock.Durability{Local: true}): a grant
// counts only once WAITAOF said it is in the master's AOF on disk. On
// masters with appendfsync always the write is on disk when the script
// returns, and WAITAOF answers at once; with everysec it waits for the next
// fsync, up to a second. The measurement runs quorumlock with and without
// it on the same masters, in alternating turns, for each fsync policy:
// lock+unlock latency on one goroutine, and throughput of 64 goroutines on
// a key each.

// DurabilityOptions configures Durability.
type DurabilityOptions struct {
	// Server is the server binary; it needs WAITAOF (Redis 7.2+, Valkey
	// 8). "" means redisproc.DefaultBinary().
	Server string
	// Nodes is the number of masters; 0 means 3.
	Nodes int
	// Latency and Throughput are the lengths of one turn of each
	// measurement; 0 means 3s each.
	Latency, Throughput time.Duration
	// Goroutines is the throughput measurement's; 0 means 64.
	Goroutines int
	// Rounds is the number of turns of each implementation in each
	// measurement; 0 means 3.
	Rounds int
	// Log, if not nil, gets a line per turn.
	Log io.Writer
}

// DurabilityRow is one policy and implementation: "plain" (no Durability)
// or "durable" (Durability{Local: true}).
type DurabilityRow struct {
	Fsync      string  `json:"appendfsync"`
	Impl       string  `json:"impl"`
	Nodes      int     `json:"nodes"`
	Latency    Dist    `json:"latency"`
	Goroutines int     `json:"goroutines"`
	PerSec     float64 `json:"per_sec"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
}

// ErrNoWAITAOF is the error of Durability on a server without WAITAOF.
var ErrNoWAITAOF = errors.New("bench: the server has no WAITAOF (it needs Redis 7.2+ or Valkey 8)")

// Durability measures quorumlock with and without durable grants on
// masters with appendfsync always and everysec.
func Durability(ctx context.Context, o DurabilityOptions) ([]DurabilityRow, error) {
	o.Latency = cmp.Or(o.Latency, 3*time.Second)
	o.Throughput = cmp.Or(o.Throughput, 3*time.Second)
	o.Nodes = cmp.Or(o.Nodes, 3)
	o.Goroutines = cmp.Or(o.Goroutines, 64)
	o.Rounds = cmp.Or(o.Rounds, 3)
	var rows []DurabilityRow
	for _, fsync := range []string{"always", "everysec"} {
		rs, err := durabilityOn(ctx, o, fsync)
		if err != nil {
			return rows, err
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// durabilityOn measures both implementations on masters with appendfsync
// fsync.
func durabilityOn(ctx context.Context, o DurabilityOptions, fsync string) ([]DurabilityRow, error) {
	var addrs []string
	for range o.Nodes {
		srv, err := redisproc.Start(redisproc.Options{Binary: o.Server, Args: []string{"--appendonly", "yes", "--appendfsync", fsync}})
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		addrs = append(addrs, srv.Addr())
	}
	if err := checkWAITAOF(ctx, addrs[0]); err != nil {
		return nil, err
	}
	s := Settings{}.withDefaults()
	impls := []struct {
		name string
		cfg  redlock.Config
	}{
		{"plain", redlock.Config{}},
		{"durable", redlock.Config{Durability: redlock.Durability{Local: true}}},
	}
	rows := make([]DurabilityRow, len(impls))
	hists := make([]*hdrhistogram.Histogram, len(impls))
	elapsed := make([]time.Duration, len(impls))
	for i, im := range impls {
		rows[i] = DurabilityRow{Fsync: fsync, Impl: im.name, Nodes: o.Nodes, Goroutines: o.Goroutines}
		hists[i] = newHist()
	}
	for round := range o.Rounds {
		for i, im := range impls {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			l, err := oursWith(addrs, s, false, im.cfg)
			if err != nil {
				return nil, err
			}
			one := mutexes(l, 1, func(int) string { return key("durable-lat", fsync, im.name) })
			many := mutexes(l, o.Goroutines, func(g int) string { return key("durable-tput", fsync, im.name, g) })
			warm := Options{Warmup: 300 * time.Millisecond, HangAfter: 5 * time.Second}
			warmup(one, warm)
			warmup(many, warm)
			lat := cycles(one, o.Latency, 5*time.Second, nil, true)
			tput := cycles(many, o.Throughput, 5*time.Second, nil, false)
			l.Close()
			hists[i].Merge(lat.hist)
			rows[i].PerSec += float64(tput.cycles) // divided by the time below
			elapsed[i] += tput.elapsed
			for _, r := range []run{lat, tput} {
				n, first := r.errs.get()
				rows[i].Errors += n
				if rows[i].FirstError == "" {
					rows[i].FirstError = first
				}
			}
			if o.Log != nil {
				fmt.Fprintf(o.Log, "durability %-8s %-7s round %d: %d latency cycles, %d throughput cycles\n",
					fsync, im.name, round, lat.cycles, tput.cycles)
			}
		}
	}
	for i := range rows {
		rows[i].Latency = distOf(hists[i])
		if elapsed[i] > 0 {
			rows[i].PerSec /= elapsed[i].Seconds()
		}
	}
	return rows, nil
}

// checkWAITAOF returns ErrNoWAITAOF when the server at addr does not know
// the command.
func checkWAITAOF(ctx context.Context, addr string) error {
	c, err := redis.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Do("WAITAOF", 1, 0, 0); err != nil {
		return fmt.Errorf("%w: %v", ErrNoWAITAOF, err)
	}
	return nil
}

// PrintDurability writes rows as a table, with each durable row's cost
// against the plain row of its fsync policy.
func PrintDurability(w io.Writer, rows []DurabilityRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "appendfsync\timpl\tN\tp50 ms\tp99 ms\tthroughput/s\tvs plain\terrors\t")
	plain := map[string]DurabilityRow{}
	for _, r := range rows {
		if r.Impl == "plain" {
			plain[r.Fsync] = r
		}
	}
	for _, r := range rows {
		vs := "-"
		if p, ok := plain[r.Fsync]; ok && r.Impl != "plain" && p.Latency.P50 > 0 && p.PerSec > 0 {
			vs = fmt.Sprintf("p50 %.2fx, thrpt %.2fx", r.Latency.P50/p.Latency.P50, r.PerSec/p.PerSec)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.0f\t%s\t%d\t\n", r.Fsync, r.Impl, r.Nodes,
			r.Latency.P50/1000, r.Latency.P99/1000, r.PerSec, vs, r.Errors)
	}
	tw.Flush()
	for _, r := range rows {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s %s: first error: %s\n", r.Fsync, r.Impl, r.FirstError)
		}
	}
}
