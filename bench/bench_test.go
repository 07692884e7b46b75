package bench_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/bench"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
)

// The Go benchmarks measure the same implementations through the same
// bench.Mutex interface as the harness, named for benchstat:
//
//	go test -run '^$' -bench . -count 6 > new.txt
//	benchstat -col /impl new.txt          # implementations side by side
//	benchstat old.txt new.txt             # one implementation across runs

var nodeCounts = []int{1, 3, 5}

// keys makes every benchmark key unique, so that what one run leaves on a
// node never meets the next.
var keys atomic.Int64

func key(prefix string) string { return fmt.Sprintf("%s:%d", prefix, keys.Add(1)) }

// forEach runs fn as a sub-benchmark nodes=N/impl=X for every N and every
// implementation that include accepts, with a Locker on the first N of five
// fresh masters, and meters it.
func forEach(b *testing.B, include func(im bench.Impl, n int) bool, fn func(b *testing.B, servers []*redisproc.Server, l bench.Locker)) {
	servers := redistest.Start(b, 5, redisproc.Options{})
	if err := bench.Register(context.Background(), redistest.Addrs(servers), 8*time.Second); err != nil {
		b.Fatal(err)
	}
	for _, n := range nodeCounts {
		var impls []bench.Impl
		for _, im := range bench.Impls() {
			if include(im, n) {
				impls = append(impls, im)
			}
		}
		if len(impls) == 0 {
			continue
		}
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for _, im := range impls {
				b.Run("impl="+im.Name, func(b *testing.B) {
					l, err := im.New(redistest.Addrs(servers[:n]), bench.Settings{})
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					report := meter(b)
					fn(b, servers[:n], l)
					report()
				})
			}
		})
	}
}

// meter starts measuring what a benchmark's time means on a shared
// machine, and returns the function that reports it: the CPU steal during
// the run (steal-%: the hypervisor's share of the CPUs' time, see
// steal.go), and the CPU time this process (client and harness, not the
// masters) spent per op (cpu-ns/op), which other processes' load moves
// far less than the time per op.
func meter(b *testing.B) (report func()) {
	var steal bench.StealMeter
	steal.Begin()
	cpu0 := cpuTime()
	return func() {
		cpu := cpuTime() - cpu0
		steal.End()
		if p := steal.Percent(); p != nil {
			b.ReportMetric(*p, "steal-%")
		}
		if cpu > 0 && b.N > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

// cpuTime is the user and system CPU time of this process so far, 0 where
// getrusage fails.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// context with a deadline: redislock would add one to each call otherwise,
// and every implementation should get the same.
func benchContext(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	b.Cleanup(cancel)
	return ctx
}

func cycle(b *testing.B, ctx context.Context, m bench.Mutex) {
	if err := m.Lock(ctx); err != nil {
		b.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLockUnlock is scenario (a) and (e): one goroutine, one key,
// uncontended lock+unlock.
func BenchmarkLockUnlock(b *testing.B) {
	forEach(b, in(bench.Latency), func(b *testing.B, _ []*redisproc.Server, l bench.Locker) {
		ctx := benchContext(b)
		m := l.NewMutex(key("lockunlock"))
		b.ReportAllocs()
		for b.Loop() {
			cycle(b, ctx, m)
		}
	})
}

// BenchmarkThroughput is scenario (b) with 64 goroutines, each on its own
// key; ns/op is the inverse of the throughput. A failed cycle does not stop
// the benchmark: it is counted in errors/op, and each cycle gets a second
// at most, so that an implementation that stalls slows the benchmark down
// without hanging it.
func BenchmarkThroughput(b *testing.B) {
	const goroutines = 64
	forEach(b, in(bench.Throughput), func(b *testing.B, _ []*redisproc.Server, l bench.Locker) {
		var errs atomic.Int64
		b.SetParallelism((goroutines + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			m := l.NewMutex(key("throughput"))
			for pb.Next() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				err := m.Lock(ctx)
				if err == nil {
					err = m.Unlock(ctx)
				}
				cancel()
				if err != nil {
					errs.Add(1)
				}
			}
		})
		b.ReportMetric(float64(errs.Load())/float64(b.N), "errors/op")
	})
}

// BenchmarkFrozen is scenario (d) with the last node frozen (SIGSTOP), for
// N >= 3. redsync-nodeadline is left out: it hangs until the node resumes.
func BenchmarkFrozen(b *testing.B) {
	include := func(im bench.Impl, n int) bool {
		return n >= 3 && im.Supports(bench.Degraded, n) && im.Name != bench.RedsyncNoDeadline
	}
	forEach(b, include, func(b *testing.B, servers []*redisproc.Server, l bench.Locker) {
		ctx := benchContext(b)
		m := l.NewMutex(key("frozen"))
		cycle(b, ctx, m) // connect to every node while all answer
		frozen := servers[len(servers)-1]
		if err := frozen.Pause(); err != nil {
			b.Fatal(err)
		}
		defer frozen.Resume()
		b.ReportAllocs()
		for b.Loop() {
			cycle(b, ctx, m)
		}
	})
}

// BenchmarkFreshConnection is the first lock+unlock of a new quorumlock
// client (a Locker over new connections) on masters whose script cache is
// empty, as after a restart: what pool's first-EVAL layer (scriptsent.go)
// claims to save, an EVALSHA answered NOSCRIPT before each script's EVAL.
// The client's dials are timed with its cycle; the masters' SCRIPT FLUSH
// before it and the client's Close after it are not.
func BenchmarkFreshConnection(b *testing.B) {
	servers := redistest.Start(b, 5, redisproc.Options{})
	addrs := redistest.Addrs(servers)
	admin := make([]redis.Conn, len(addrs))
	for i, addr := range addrs {
		c, err := redis.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		admin[i] = c
	}
	var ours bench.Impl
	for _, im := range bench.Impls() {
		if im.Name == bench.Ours {
			ours = im
		}
	}
	for _, n := range nodeCounts {
		b.Run(fmt.Sprintf("nodes=%d/impl=%s", n, ours.Name), func(b *testing.B) {
			ctx := benchContext(b)
			report := meter(b)
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				for _, c := range admin[:n] {
					if _, err := c.Do("SCRIPT", "FLUSH"); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				l, err := ours.New(addrs[:n], bench.Settings{})
				if err != nil {
					b.Fatal(err)
				}
				cycle(b, ctx, l.NewMutex(key("fresh")))
				b.StopTimer()
				l.Close()
				b.StartTimer()
			}
			report()
		})
	}
}

// in accepts the implementations that take part in sc.
func in(sc bench.Scenario) func(bench.Impl, int) bool {
	return func(im bench.Impl, n int) bool { return im.Supports(sc, n) }
}

// BenchmarkElection is the election measurement (bench.Election) as a Go
// benchmark: each op is one leader change (the waiting candidate's
// Campaign, the pause, the leader's Resign) and one Proclaim, with the
// observer's deliveries of both. ns/op includes the pause
// (ElectionOptions.Pause, 20ms) and means little; the metrics are the
// medians and 99th percentiles of the leader change (Resign called to the
// next Campaign returned) and of the notifications (Campaign or Proclaim
// returned to Observe delivering it), in ns. Give it a few hundred ops:
//
//	go test -run '^$' -bench Election -benchtime 300x
func BenchmarkElection(b *testing.B) {
	servers := redistest.Start(b, 5, redisproc.Options{})
	if err := bench.Register(context.Background(), redistest.Addrs(servers), 8*time.Second); err != nil {
		b.Fatal(err)
	}
	for _, n := range nodeCounts {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			ctx := benchContext(b)
			e, err := bench.NewElectionBench(ctx, redistest.Addrs(servers[:n]), key("election"), bench.ElectionOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			report := meter(b)
			for b.Loop() {
				if err := e.Once(ctx); err != nil {
					b.Fatal(err)
				}
			}
			report()
			r := e.Result()
			if r.Errors > 0 {
				b.Logf("%d errors, the first: %s", r.Errors, r.FirstError)
			}
			us := func(v float64) float64 { return v * 1000 }
			b.ReportMetric(us(r.Change.P50), "change-p50-ns")
			b.ReportMetric(us(r.Change.P99), "change-p99-ns")
			b.ReportMetric(us(r.Campaign.P50), "seen-p50-ns")
			b.ReportMetric(us(r.Campaign.P99), "seen-p99-ns")
			b.ReportMetric(us(r.Proclaim.P50), "proclaimed-seen-p50-ns")
			b.ReportMetric(us(r.Proclaim.P99), "proclaimed-seen-p99-ns")
			b.ReportMetric(float64(r.Missed+r.Errors)/float64(b.N), "failed/op")
		})
	}
}
