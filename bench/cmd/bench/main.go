package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/quorumlock/quorumlock/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		asJSON  = flag.Bool("json", false, "write the report as JSON instead of tables")
		svg     = flag.String("svg", "latency.svg", `write the latency plot to this file ("" for none)`)
		short   = flag.Bool("short", false, "tiny durations, for a smoke test")
		nodes   = flag.String("nodes", "1,3,5", "comma-separated N to measure")
		impls   = flag.String("impls", "", "comma-separated implementations to run (default all)")
		quiet   = flag.Bool("q", false, "no progress log")
		rounds  = flag.Int("rounds", 0, "turns per implementation in each measurement (0: default)")
		lrounds = flag.Int("latency-rounds", 0, "turns per implementation in the latency measurement (0: default)")
		latency = flag.Duration("latency", 0, "scenario (a) duration per implementation and N (0: default)")
		tput    = flag.Duration("throughput", 0, "scenario (b) duration per implementation, N and goroutine count (0: default)")
		contend = flag.Duration("contention", 0, "scenario (c) duration per implementation and N (0: default)")
		degrade = flag.Duration("degraded", 0, "scenario (d) duration per implementation, N and fault (0: default)")
		hang    = flag.Duration("hang", 0, "how long past its duration a turn may run before it counts as hung (0: default)")
		from    = flag.String("from", "", "render a report saved with -json instead of running")
		durable = flag.Bool("durability", false, "measure only what durable grants cost: quorumlock with and without Durability{Local: true} on masters with appendfsync always and everysec (-server needs WAITAOF); -latency, -throughput and -rounds set its turns")
		elect   = flag.Bool("election", false, "measure only leader election (redlock.Election): leader change and observer notification latency for each -nodes; -rounds sets its rounds")
		changes = flag.Int("changes", 0, "-election: leader changes per N (0: default 300)")
		server  = flag.String("server", "", "server binary of -durability's masters (default $QUORUMLOCK_SERVER, else redis-server)")
	)
	flag.Parse()
	if *from != "" {
		r, err := load(*from)
		if err != nil {
			return err
		}
		return output(r, *asJSON, *svg)
	}

	var opts bench.Options
	if *short {
		opts = bench.ShortOptions()
	}
	for _, f := range strings.Split(*nodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -nodes %q", *nodes)
		}
		opts.Nodes = append(opts.Nodes, n)
	}
	if *impls != "" {
		opts.Impls = strings.Split(*impls, ",")
	}
	set := func(dst *int64, v int64) {
		if v > 0 {
			*dst = v
		}
	}
	set((*int64)(&opts.Latency), int64(*latency))
	set((*int64)(&opts.Throughput), int64(*tput))
	set((*int64)(&opts.Contention), int64(*contend))
	set((*int64)(&opts.Degraded), int64(*degrade))
	set((*int64)(&opts.HangAfter), int64(*hang))
	if *rounds > 0 {
		opts.Rounds = *rounds
	}
	if *lrounds > 0 {
		opts.LatencyRounds = *lrounds
	}
	opts.Log = os.Stderr
	if *quiet {
		opts.Log = io.Discard
	}

	// Interrupting stops the run between turns; Run stops its servers.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *elect {
		eo := bench.ElectionOptions{}
		if *short {
			eo = bench.ShortElectionOptions()
		}
		eo.Nodes, eo.Log = opts.Nodes, opts.Log
		if *changes > 0 {
			eo.Changes = *changes
		}
		if *rounds > 0 {
			eo.Rounds = *rounds
		}
		r, err := bench.Election(ctx, eo)
		if r == nil {
			return err
		}
		return errors.Join(printOrJSON(*asJSON, r, func() { bench.PrintElection(os.Stdout, r) }), err)
	}
	if *durable {
		rows, err := bench.Durability(ctx, bench.DurabilityOptions{Server: *server, Latency: opts.Latency,
			Throughput: opts.Throughput, Rounds: opts.Rounds, Log: opts.Log})
		return errors.Join(printOrJSON(*asJSON, rows, func() { bench.PrintDurability(os.Stdout, rows) }), err)
	}
	r, err := bench.Run(ctx, opts)
	if r == nil {
		return err
	}
	return errors.Join(output(r, *asJSON, *svg), err)
}

// output writes r as JSON or tables to standard output, and its plot to
// svg unless that is empty.
func output(r *bench.Report, asJSON bool, svg string) error {
	if svg != "" {
		f, err := os.Create(svg)
		if err != nil {
			return err
		}
		if err := r.WriteSVG(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if asJSON {
		return r.WriteJSON(os.Stdout)
	}
	return r.WriteTable(os.Stdout)
}

// printOrJSON writes v to standard output as indented JSON when asJSON,
// and otherwise prints it with print.
func printOrJSON(asJSON bool, v any, print func()) error {
	if !asJSON {
		print()
		return nil
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// load reads a report written with -json.
func load(path string) (*bench.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r bench.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.Targets = r.Evaluate() // with this checker, which may be newer than the run
	return &r, nil
}
