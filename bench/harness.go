package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// Options configure a Run. A zero field means the default given on it;
// the defaults keep a run under five minutes on two CPUs.
type Options struct {
	// Nodes lists the N to measure; default 1, 3, 5.
	Nodes []int `json:"nodes"`
	// Impls names the implementations to run; default all of Impls().
	Impls []string `json:"impls,omitempty"`
	// Rounds is how many times the implementations take turns in each
	// throughput and contention measurement, in a rotating order, so that
	// drift in the machine's speed spreads over all of them; each turn
	// lasts the duration divided by Rounds. Default 3.
	Rounds int `json:"rounds"`
	// LatencyRounds is Rounds for the latency measurement; default 10.
	// Its turns are short and uncontended, and a burst of CPU steal (see
	// steal.go) that falls on one implementation's few turns moves that
	// implementation's p50 by more than the differences being measured:
	// more, shorter turns spread such a burst over all of them.
	LatencyRounds int `json:"latency_rounds"`
	// Warmup is the untimed lock+unlock before each timed turn, to fill
	// the connection pools; default 50ms.
	Warmup time.Duration `json:"warmup_ns"`
	// Latency is scenario (a)'s duration per implementation and N; default 2s.
	Latency time.Duration `json:"latency_ns"`
	// Throughput is scenario (b)'s duration per implementation, N and
	// goroutine count; default 1s.
	Throughput time.Duration `json:"throughput_ns"`
	// Goroutines are scenario (b)'s goroutine counts, a key each; default
	// 16, 64, 256.
	Goroutines []int `json:"goroutines"`
	// SharedGoroutines goroutines share SharedKeys keys (goroutine i locks
	// key i mod SharedKeys) in one more row of scenario (b); default 64 and
	// 16. A negative SharedKeys leaves the row out.
	SharedGoroutines int `json:"shared_goroutines"`
	SharedKeys       int `json:"shared_keys"`
	// Contention is scenario (c)'s duration per implementation and N;
	// default 4s.
	Contention time.Duration `json:"contention_ns"`
	// Clients is the number of contending clients; default 8.
	Clients int `json:"clients"`
	// Hold is how long a contending client holds the lock; default 1ms.
	Hold time.Duration `json:"hold_ns"`
	// Degraded is scenario (d)'s duration per implementation, N and fault;
	// default 2s.
	Degraded time.Duration `json:"degraded_ns"`
	// HangAfter is how long past its duration a turn may run before it is
	// reported as hung; default 5s. The turn's calls get a context that
	// ends halfway (see drive): a call still running then has outlived its
	// context by HangAfter/2.
	HangAfter time.Duration `json:"hang_after_ns"`
	// Settings are given to every implementation alike.
	Settings Settings `json:"settings"`
	// Log, if set, receives a line per turn as the run goes.
	Log io.Writer `json:"-"`
}

// ShortOptions are tiny durations that exercise every scenario and every
// row in seconds, for tests; their numbers mean little.
func ShortOptions() Options {
	return Options{
		Rounds:        1,
		LatencyRounds: 2,
		Warmup:        2 * time.Millisecond,
		Latency:       20 * time.Millisecond,
		Throughput:    15 * time.Millisecond,
		Contention:    40 * time.Millisecond,
		Degraded:      20 * time.Millisecond,
		HangAfter:     200 * time.Millisecond,
	}
}

func (o Options) withDefaults() Options {
	if len(o.Nodes) == 0 {
		o.Nodes = []int{1, 3, 5}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Warmup, 50*time.Millisecond)
	def(&o.Latency, 2*time.Second)
	def(&o.Throughput, time.Second)
	def(&o.Contention, 4*time.Second)
	def(&o.Hold, time.Millisecond)
	def(&o.Degraded, 2*time.Second)
	def(&o.HangAfter, 5*time.Second)
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.LatencyRounds <= 0 {
		o.LatencyRounds = 10
	}
	if len(o.Goroutines) == 0 {
		o.Goroutines = []int{16, 64, 256}
	}
	if o.SharedGoroutines <= 0 {
		o.SharedGoroutines = 64
	}
	if o.SharedKeys == 0 {
		o.SharedKeys = 16
	}
	if o.Clients <= 0 {
		o.Clients = 8
	}
	o.Settings = o.Settings.withDefaults()
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// The faults of scenario (d).
const (
	Frozen = "frozen" // SIGSTOP: the node accepts connections and answers nothing
	Killed = "killed" // SIGKILL: connections are refused
)

// Run starts max(Nodes) redis-server processes, measures every scenario
// with every implementation against them, and stops them. Cancelling ctx
// stops the run between turns.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	h := &harness{opts: opts}
	for _, im := range Impls() {
		if len(opts.Impls) == 0 || slices.Contains(opts.Impls, im.Name) {
			h.impls = append(h.impls, im)
		}
	}
	if len(h.impls) == 0 {
		return nil, fmt.Errorf("bench: no implementation named in %v", opts.Impls)
	}
	r := &Report{Started: time.Now(), Env: env(), Options: opts}
	for _, im := range h.impls {
		r.Impls = append(r.Impls, ImplInfo{Name: im.Name, Config: im.Config})
	}
	h.r = r

	defer h.closeServers()
	for range slices.Max(opts.Nodes) {
		s, err := redisproc.Start(redisproc.Options{})
		if err != nil {
			return nil, err
		}
		h.servers = append(h.servers, s)
	}
	if err := Register(ctx, h.addrs(len(h.servers)), opts.Settings.TTL); err != nil {
		return nil, err
	}

	var steal stealMeter // over the whole run
	steal.begin()
	var err error
	for _, n := range opts.Nodes {
		if err = h.healthy(ctx, n); err != nil {
			break
		}
		if n >= 3 {
			if err = h.degraded(ctx, n); err != nil {
				break
			}
		}
	}
	r.Targets = r.Evaluate()
	r.WallSeconds = time.Since(r.Started).Seconds()
	r.Env.LoadEnd = loadavg()
	steal.end()
	r.Env.StealPercent = steal.percent()
	return r, err
}

type harness struct {
	opts    Options
	impls   []Impl
	servers []*redisproc.Server
	r       *Report
}

func (h *harness) closeServers() {
	for _, s := range h.servers {
		s.Close()
	}
}

func (h *harness) addrs(n int) []string {
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = h.servers[i].Addr()
	}
	return addrs
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(h.opts.Log, format+"\n", args...)
}

// contender is one implementation's client in the healthy scenarios.
type contender struct {
	im Impl
	l  Locker
}

// turns calls fn for each contender that supports sc, Rounds times
// (LatencyRounds for Latency), in an order that rotates by one each round;
// fn gets the round and the share of the total duration d it may use.
func (h *harness) turns(ctx context.Context, cs []contender, sc Scenario, n int, d time.Duration, fn func(c contender, round int, d time.Duration)) error {
	rounds := h.opts.Rounds
	if sc == Latency {
		rounds = h.opts.LatencyRounds
	}
	var in []contender
	for _, c := range cs {
		if c.im.Supports(sc, n) {
			in = append(in, c)
		}
	}
	for round := range rounds {
		for i := range in {
			if err := ctx.Err(); err != nil {
				return err
			}
			fn(in[(i+round)%len(in)], round, d/time.Duration(rounds))
		}
	}
	return nil
}

// key names a benchmark key from its parts: every scenario, implementation
// and N has keys of its own.
func key(parts ...any) string {
	var b strings.Builder
	b.WriteString("bench")
	for _, p := range parts {
		fmt.Fprintf(&b, ":%v", p)
	}
	return b.String()
}

// mutexes makes g Mutexes of l, the i-th on keyOf(i).
func mutexes(l Locker, g int, keyOf func(i int) string) []Mutex {
	ms := make([]Mutex, g)
	for i := range ms {
		ms[i] = l.NewMutex(keyOf(i))
	}
	return ms
}

// healthy measures scenarios (a), (b), (c) and (e) with n healthy nodes,
// all implementations on the same masters, one client each for the whole
// of n.
func (h *harness) healthy(ctx context.Context, n int) error {
	o := h.opts
	var cs []contender
	defer func() {
		for _, c := range cs {
			c.l.Close()
		}
	}()
	for _, im := range h.impls {
		if !im.Supports(Latency|Throughput|Contention, n) {
			continue
		}
		l, err := im.New(h.addrs(n), o.Settings)
		if err != nil {
			return fmt.Errorf("bench: %s with %d nodes: %w", im.Name, n, err)
		}
		cs = append(cs, contender{im, l})
	}
	if err := h.latency(ctx, cs, n); err != nil {
		return err
	}
	for _, g := range o.Goroutines {
		if err := h.throughput(ctx, cs, n, g, 0); err != nil {
			return err
		}
	}
	if o.SharedKeys > 0 {
		if err := h.throughput(ctx, cs, n, o.SharedGoroutines, o.SharedKeys); err != nil {
			return err
		}
	}
	return h.contention(ctx, cs, n)
}

// latency measures scenarios (a) and (e): one goroutine, one key.
func (h *harness) latency(ctx context.Context, cs []contender, n int) error {
	o := h.opts
	type latAcc struct {
		hist                  *hdrhistogram.Histogram
		cycles, mallocs, byts uint64
		errs                  int64
		first                 string
		hung                  bool
		goroutines            int
		steal                 stealMeter
	}
	lat := map[string]*latAcc{}
	err := h.turns(ctx, cs, Latency, n, o.Latency, func(c contender, round int, d time.Duration) {
		a := lat[c.im.Name]
		if a == nil {
			a = &latAcc{hist: newHist()}
			lat[c.im.Name] = a
		}
		if a.hung {
			return
		}
		ms := mutexes(c.l, 1, func(int) string { return key("lat", c.im.Name, n) })
		if warmup(ms, o) {
			a.hung = true
			return
		}
		var before, after runtime.MemStats
		stop := sampleGoroutines(len(ms))
		runtime.ReadMemStats(&before)
		a.steal.begin()
		res := cycles(ms, d, o.HangAfter, nil, true)
		a.steal.end()
		runtime.ReadMemStats(&after)
		a.goroutines = max(a.goroutines, stop())
		h.logf("N=%d latency    %-18s round %d: %d cycles", n, c.im.Name, round, res.cycles)
		a.cycles += uint64(res.cycles)
		a.mallocs += after.Mallocs - before.Mallocs
		a.byts += after.TotalAlloc - before.TotalAlloc
		errs, first := res.errs.get()
		a.errs += errs
		if a.first == "" {
			a.first = first
		}
		a.hung = a.hung || res.hung
		if res.hist != nil {
			a.hist.Merge(res.hist)
		}
	})
	if err != nil {
		return err
	}
	for _, c := range cs {
		a := lat[c.im.Name]
		if a == nil {
			continue
		}
		row := LatencyRow{Impl: c.im.Name, Nodes: n, Dist: distOf(a.hist), Errors: a.errs, FirstError: a.first, Hung: a.hung, Goroutines: a.goroutines,
			StealPercent: a.steal.percent()}
		if a.cycles > 0 {
			row.AllocsPerCycle = float64(a.mallocs) / float64(a.cycles)
			row.BytesPerCycle = float64(a.byts) / float64(a.cycles)
		}
		h.r.Latency = append(h.r.Latency, row)
	}
	return nil
}

// throughput measures scenario (b): g goroutines, a key each, or, with
// keys > 0, sharing keys keys (goroutine i on key i mod keys).
func (h *harness) throughput(ctx context.Context, cs []contender, n, g, keys int) error {
	o := h.opts
	rows := map[string]*ThroughputRow{}
	elapsed := map[string]time.Duration{}
	mallocs := map[string]uint64{}
	err := h.turns(ctx, cs, Throughput, n, o.Throughput, func(c contender, round int, d time.Duration) {
		row := rows[c.im.Name]
		if row == nil {
			row = &ThroughputRow{Impl: c.im.Name, Nodes: n, Goroutines: g, Keys: keys}
			rows[c.im.Name] = row
		}
		if row.Hung {
			return
		}
		ms := mutexes(c.l, g, func(i int) string {
			if keys > 0 {
				return key("shared", c.im.Name, n, g, i%keys)
			}
			return key("tput", c.im.Name, n, g, i)
		})
		if warmup(ms, o) {
			row.Hung = true
			return
		}
		var before, after runtime.MemStats
		stop := sampleGoroutines(g)
		runtime.ReadMemStats(&before)
		res := cycles(ms, d, o.HangAfter, nil, false)
		runtime.ReadMemStats(&after)
		row.ExtraGoroutines = max(row.ExtraGoroutines, stop())
		mallocs[c.im.Name] += after.Mallocs - before.Mallocs
		h.logf("N=%d throughput %-18s round %d: %d goroutines, %d keys, %d cycles", n, c.im.Name, round, g, keys, res.cycles)
		row.Cycles += res.cycles
		elapsed[c.im.Name] += res.elapsed
		errs, first := res.errs.get()
		row.Errors += errs
		if row.FirstError == "" {
			row.FirstError = first
		}
		row.Hung = row.Hung || res.hung
	})
	if err != nil {
		return err
	}
	for _, c := range cs {
		if row := rows[c.im.Name]; row != nil {
			if e := elapsed[c.im.Name]; e > 0 {
				row.PerSec = float64(row.Cycles) / e.Seconds()
			}
			if row.Cycles > 0 {
				row.AllocsPerCycle = float64(mallocs[c.im.Name]) / float64(row.Cycles)
			}
			h.r.Throughput = append(h.r.Throughput, *row)
		}
	}
	return nil
}

// sampleGoroutines samples the process's goroutines every millisecond
// until stop is called, and stop returns the most it saw beyond those
// running when it started and the drivers goroutines that the measurement
// starts itself: the goroutines the implementation runs while it works.
func sampleGoroutines(drivers int) (stop func() int) {
	base := runtime.NumGoroutine() + 1 // this sampler
	done := make(chan struct{})
	peak := make(chan int, 1)
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		most := 0
		for {
			select {
			case <-done:
				peak <- most
				return
			case <-t.C:
				most = max(most, runtime.NumGoroutine())
			}
		}
	}()
	return func() int {
		close(done)
		// drive's own waiter goroutine is not the implementation's.
		return max(0, <-peak-base-drivers-1)
	}
}

// contention measures scenario (c): Clients clients, one key.
func (h *harness) contention(ctx context.Context, cs []contender, n int) error {
	o := h.opts
	type conAcc struct {
		row    ContentionRow
		counts []int64
		waits  *hdrhistogram.Histogram
		secs   float64
	}
	con := map[string]*conAcc{}
	err := h.turns(ctx, cs, Contention, n, o.Contention, func(c contender, round int, d time.Duration) {
		a := con[c.im.Name]
		if a == nil {
			a = &conAcc{counts: make([]int64, o.Clients), waits: newHist()}
			a.row = ContentionRow{Impl: c.im.Name, Nodes: n, Clients: o.Clients, HoldMicros: float64(o.Hold) / float64(time.Microsecond)}
			con[c.im.Name] = a
		}
		if a.row.Hung {
			return
		}
		ms := mutexes(c.l, o.Clients, func(int) string { return key("contend", c.im.Name, n) })
		counts, waits, spurious, elapsed, hung := contend(ms, d, o.Hold, o.HangAfter)
		for i, k := range counts {
			a.counts[i] += k
		}
		if waits != nil {
			a.waits.Merge(waits)
		}
		a.secs += elapsed.Seconds()
		errs, first := spurious.get()
		a.row.Spurious += errs
		if a.row.SpuriousError == "" {
			a.row.SpuriousError = first
		}
		a.row.Hung = a.row.Hung || hung
		h.logf("N=%d contention %-18s round %d: %v acquisitions, %d spurious failures", n, c.im.Name, round, counts, errs)
	})
	if err != nil {
		return err
	}
	for _, c := range cs {
		a := con[c.im.Name]
		if a == nil {
			continue
		}
		row := a.row
		for _, k := range a.counts {
			row.Acquisitions += k
		}
		row.Wait = distOf(a.waits)
		if a.secs > 0 {
			row.PerSec = float64(row.Acquisitions) / a.secs
		}
		row.Shares = make([]float64, len(a.counts))
		if row.Acquisitions > 0 {
			mean := float64(row.Acquisitions) / float64(len(a.counts))
			row.MinShareOfMean = float64(slices.Min(a.counts)) / mean
			for i, k := range a.counts {
				row.Shares[i] = float64(k) / float64(row.Acquisitions)
			}
		}
		h.r.Contention = append(h.r.Contention, row)
	}
	return nil
}

// degraded measures scenario (d) with n nodes, the last of which is frozen
// or killed. Each implementation gets a client of its own, made before its
// turn and closed after, so that the goroutines and connections counted at
// the end of the turn are its own.
func (h *harness) degraded(ctx context.Context, n int) error {
	var in []Impl
	for _, im := range h.impls {
		if im.Supports(Degraded, n) {
			in = append(in, im)
		}
	}
	for _, fault := range []string{Frozen, Killed} {
		for _, im := range in {
			if err := ctx.Err(); err != nil {
				return err
			}
			row, err := h.degradedTurn(im, n, fault)
			if err != nil {
				return err
			}
			h.logf("N=%d degraded   %-18s %s: %d cycles, %d errors, hung %v", n, im.Name, fault, row.Count, row.Errors, row.Hung)
			h.r.Degraded = append(h.r.Degraded, row)
		}
	}
	return nil
}

func (h *harness) degradedTurn(im Impl, n int, fault string) (DegradedRow, error) {
	o := h.opts
	row := DegradedRow{Impl: im.Name, Nodes: n, Fault: fault}
	faulty := h.servers[n-1]
	ports := make([]int, n)
	for i := range ports {
		ports[i] = h.servers[i].Port()
	}
	settle()
	conns0 := tcpConns(ports)
	g0 := runtime.NumGoroutine()

	l, err := im.New(h.addrs(n), o.Settings)
	if err != nil {
		return row, fmt.Errorf("bench: %s with %d nodes: %w", im.Name, n, err)
	}
	defer l.Close()
	ms := mutexes(l, 1, func(int) string { return key("degraded", im.Name, n, fault) })
	if warmup(ms, o) {
		row.Hung = true
		return row, nil
	}
	row.Healthy = distOf(cycles(ms, o.Degraded/2, o.HangAfter, nil, true).hist)

	inject, lift := faulty.Pause, faulty.Resume
	if fault == Killed {
		inject, lift = faulty.Kill, faulty.Start
	}
	// Killing a server ends the goroutine that waits for its process:
	// count from after the fault, so that it is not counted as ours.
	before := runtime.NumGoroutine()
	if err := inject(); err != nil {
		return row, err
	}
	settle()
	g0 += runtime.NumGoroutine() - before
	var once sync.Once
	var liftErr error
	unstick := func() { once.Do(func() { liftErr = lift() }) }
	defer unstick()

	res := cycles(ms, o.Degraded, o.HangAfter, unstick, true)
	row.Goroutines = runtime.NumGoroutine() - g0
	conns := tcpConns(ports)
	for _, p := range ports {
		row.Conns += conns[p] - conns0[p]
	}
	row.FaultyConns = conns[faulty.Port()] - conns0[faulty.Port()]
	if fr, ok := l.(FaultReporter); ok {
		row.Visible = fr.NodeFaults() > 0
	}
	row.Dist = distOf(res.hist)
	row.Count = res.cycles
	row.Errors, row.FirstError = res.errs.get()
	row.Hung = res.hung
	unstick()
	return row, liftErr
}

// env describes this machine and its redis-server.
func env() Env {
	e := Env{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	e.LoadStart = loadavg()
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		e.Redis = "unknown: " + err.Error()
	} else {
		e.Redis = strings.TrimSpace(string(out))
	}
	return e
}

// loadavg returns the first three fields of /proc/loadavg, or "".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// settle waits, up to a second, until the number of goroutines stops
// falling, so that what a previous turn left behind is not counted against
// the next.
func settle() {
	prev := runtime.NumGoroutine()
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		now := runtime.NumGoroutine()
		if now >= prev {
			return
		}
		prev = now
	}
}

// warmup runs the warm-up cycles on ms and reports whether they hung. A
// hung warm-up may leave goroutines still inside ms's Lock or Unlock, so
// the measurement that would reuse ms is skipped and its row marked hung.
func warmup(ms []Mutex, o Options) bool {
	return cycles(ms, o.Warmup, o.HangAfter, nil, false).hung
}
