// Command chaos runs quorumlock's chaos suite: every scenario (or the ones
// named) against five independent Redis masters, with a progress display, a
// report per scenario and an SVG timeline of each.
//
//	cd chaos && go run ./cmd/chaos                  # the suite on local redis-server processes, under 2 minutes
//	go run ./cmd/chaos --short                      # a few seconds per scenario
//	go run ./cmd/chaos --soak 30m                   # the random workloads for half an hour
//	go run ./cmd/chaos --scenario clock-jump --seed 42
//	go run ./cmd/chaos --backend docker --build-image   # containers of an image built from the host's redis-server
//	go run ./cmd/chaos --backend compose            # the masters of docker-compose.yml
//	go run ./cmd/chaos --json > report.json
//	go run ./cmd/chaos --short --server valkey-server   # the masters are Valkey
//	go run ./cmd/chaos --client goredis             # every client of the safe scenarios over the go-redis adapter
//
// The safe scenarios' clients reach the masters through a mix, drawn from
// the seed, of the library's entry points: the pipelined and the Pooled
// pool.Node, and the go-redis and rueidis adapters (--client names one for
// all of them). Each scenario runs under a watchdog (--watchdog): one that
// hangs fails with the stacks of every goroutine, written beside the
// timelines, and the suite goes on; one that panics fails the same way.
// With --isolate each scenario runs in a process of its own, so that even a
// panic on one of the library's own goroutines fails that scenario only.
//
// It exits with status 1 when a scenario did not show its expected outcome,
// 2 on bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/redisimage"
	"github.com/quorumlock/quorumlock/chaos/report"
	"github.com/quorumlock/quorumlock/chaos/scenario"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config is the parsed command line.
type config struct {
	backend    string
	image      string
	buildImage bool
	scenarios  []scenario.Scenario
	seed       uint64
	duration   time.Duration
	clients    int
	json       bool
	svgDir     string
	progress   bool
	short      bool
	server     string
	transport  workload.Transport
	watchdog   time.Duration
	isolate    bool
}

func parse(args []string, stderr io.Writer) (config, error) {
	var (
		c         config
		names     string
		short     bool
		soak      time.Duration
		noProg    bool
		listNames bool
		client    string
	)
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.backend, "backend", cluster.BackendLocal, "masters: local (redis-server processes), docker (dockertest containers) or compose (docker-compose.yml, started beforehand)")
	fs.StringVar(&c.image, "image", "", "Redis image of the docker backend (default $"+cluster.ImageEnv+", else "+cluster.DefaultImage+")")
	fs.BoolVar(&c.buildImage, "build-image", false, "docker backend: build "+redisimage.Tag+" from the host's redis-server and use it (for machines without a registry)")
	fs.StringVar(&names, "scenario", "", "comma-separated scenarios to run (default: all; see --list)")
	fs.BoolVar(&listNames, "list", false, "list the scenarios and exit")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of every scenario, to replay a run (default: a random seed per scenario, printed)")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "length of the random workloads (safe-minority runs this long, split-vote and paused-holder a third)")
	fs.BoolVar(&short, "short", false, "short form: --duration "+scenario.Short.String()+", as the tests run")
	fs.DurationVar(&soak, "soak", 0, "long soak: run the random workloads this long (e.g. 30m); overrides --duration")
	fs.IntVar(&c.clients, "clients", 4, "clients of the random workloads")
	fs.BoolVar(&c.json, "json", false, "write the report as JSON to stdout")
	fs.StringVar(&c.svgDir, "svg-dir", "chaos-report", "directory for the SVG timelines and the goroutine dumps of scenarios that hung or panicked (\"\" for none)")
	fs.BoolVar(&noProg, "no-progress", false, "no progress display on stderr")
	fs.StringVar(&c.server, "server", "", "server binary of the local backend's masters, e.g. valkey-server (default $"+cluster.ServerEnv+", else "+cluster.DefaultServer+")")
	fs.StringVar(&client, "client", "", fmt.Sprintf("how every client of the safe scenarios reaches the masters, one of %v (default: a mix drawn from the seed)", workload.Transports))
	fs.BoolVar(&c.isolate, "isolate", false, "run each scenario in a process of its own, so that a panic on any goroutine (the library's own too) fails that scenario only")
	fs.DurationVar(&c.watchdog, "watchdog", 0, "longest a scenario may run before it fails as hung, with a goroutine dump (default 2 x --duration + 2m)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("chaos: unexpected arguments %q", fs.Args())
	}
	if listNames {
		for _, s := range scenario.All() {
			fmt.Fprintf(stderr, "%-16s %s\n%16s expected: %s\n", s.Name, s.Invariant, "", s.Expect)
		}
		return c, flag.ErrHelp
	}
	switch {
	case soak > 0:
		c.duration = soak
	case short:
		c.duration, c.short = scenario.Short, true
	}
	if c.duration <= 0 || c.clients <= 0 || c.watchdog < 0 {
		return c, errors.New("chaos: --duration and --clients must be positive, --watchdog not negative")
	}
	if client != "" {
		t, err := workload.ParseTransport(client)
		if err != nil {
			return c, fmt.Errorf("chaos: --client: %w", err)
		}
		c.transport = t
	}
	c.progress = !noProg
	if names == "" {
		c.scenarios = scenario.All()
		return c, nil
	}
	for _, n := range strings.Split(names, ",") {
		s, ok := scenario.Lookup(strings.TrimSpace(n))
		if !ok {
			return c, fmt.Errorf("chaos: no scenario %q (see --list)", n)
		}
		c.scenarios = append(c.scenarios, s)
	}
	return c, nil
}

// run runs the command and returns its exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	open, image, err := opener(ctx, c, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}

	prog := newProgress(stderr, c.progress)
	var results []scenario.Result
	for _, s := range c.scenarios {
		if ctx.Err() != nil {
			break
		}
		prog.start(s.Name)
		if c.isolate {
			r := runIsolated(ctx, c, s, image)
			prog.done(r)
			results = append(results, r)
			continue
		}
		r := s.Run(ctx, scenario.Options{
			Backend:   c.backend,
			Open:      open,
			Seed:      c.seed,
			Duration:  c.duration,
			Clients:   c.clients,
			Progress:  prog.update,
			Server:    c.server,
			Transport: c.transport,
			Watchdog:  c.watchdog,
		})
		prog.done(r)
		results = append(results, r)
	}

	suite := report.Suite{Short: c.short, Duration: c.duration}
	if suite.SVGs, suite.Dumps, err = writeFiles(c, results); err != nil {
		fmt.Fprintln(stderr, err)
	}
	if c.json {
		err = report.JSON(stdout, suite, results)
	} else {
		fmt.Fprintln(stdout)
		err = report.Text(stdout, suite, results)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, r := range results {
		if r.Verdict == scenario.Fail || r.Verdict == scenario.Error {
			return 1
		}
	}
	if ctx.Err() != nil {
		return 1
	}
	return 0
}

// opener returns how scenarios start their cluster on the chosen backend,
// and the Docker image they run (built here with --build-image).
func opener(ctx context.Context, c config, stderr io.Writer) (func(context.Context, cluster.Config) (cluster.Cluster, error), string, error) {
	switch c.backend {
	case cluster.BackendLocal, cluster.BackendCompose:
		return func(ctx context.Context, cfg cluster.Config) (cluster.Cluster, error) {
			return cluster.Start(ctx, c.backend, cfg)
		}, "", nil
	case cluster.BackendDocker:
		image := c.image
		if c.buildImage {
			fmt.Fprintf(stderr, "building %s from the host's redis-server...\n", redisimage.Tag)
			img, err := redisimage.Build(ctx, redisimage.Tag)
			if err != nil {
				return nil, "", err
			}
			image = img
		}
		return func(ctx context.Context, cfg cluster.Config) (cluster.Cluster, error) {
			return cluster.StartDocker(ctx, cluster.DockerConfig{Config: cfg, Image: image})
		}, image, nil
	default:
		return nil, "", fmt.Errorf("chaos: unknown backend %q", c.backend)
	}
}

// writeFiles writes the timelines (unless the children did) and the
// goroutine dumps of results to c.svgDir, and returns where they are.
func writeFiles(c config, results []scenario.Result) (svgs, dumps map[string]string, err error) {
	if c.svgDir == "" {
		return nil, nil, nil
	}
	if c.isolate {
		svgs = childFiles(c.svgDir, results)
	} else if svgs, err = report.WriteSVGs(c.svgDir, results); err != nil {
		return svgs, nil, err
	}
	dumps, err = report.WriteDumps(c.svgDir, results)
	return svgs, dumps, err
}
