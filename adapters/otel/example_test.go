package otel_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/quorumlock/quorumlock/adapters/otel"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Give a Locker the Observer (redlock.Config.Observer); it records through
// otel's global providers, which the service sets up once
// (otel.SetMeterProvider and otel.SetTracerProvider of
// go.opentelemetry.io/otel), unless WithMeterProvider and
// WithTracerProvider name others.
func ExampleNewObserver() {
	var nodes []redlock.Node
	for _, addr := range []string{"redis-a:6379", "redis-b:6379", "redis-c:6379"} {
		nodes = append(nodes, pool.New(pool.Config{Addr: addr}))
	}
	locker, err := redlock.New(nodes, redlock.Config{Observer: otel.NewObserver()})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close(context.Background())
	// Every acquisition, Unlock, Extend and loss of every kind of lock is
	// now measured; a master that stops answering is traced once.
}

// Every kind of lock is reported under its kind (the quorumlock.lock.kind
// attribute: redlock.KindLock, KindFenced, KindReentrant, KindRead,
// KindWrite, KindFair, KindSemaphore, KindMulti). Here a Locker with
// redlock.Config{Observer: obs} takes each kind once and unlocks it, and
// the spans are printed from an in-memory exporter: an acquisition's, then
// its hold's.
func Example_kinds() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	obs := otel.NewObserver(otel.WithTracerProvider(tp))

	// In a real program: pool.New nodes for your masters, as in
	// ExampleNewObserver.
	nodes := exampleNodes()
	locker, err := redlock.New(nodes, redlock.Config{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close(context.Background())
	fencing, err := redlock.New(nodes, redlock.Config{Observer: obs, Fencing: true})
	if err != nil {
		log.Fatal(err)
	}
	defer fencing.Close(context.Background())

	ctx := context.Background()
	rw := locker.RWMutex("catalog")
	for _, take := range []func() (*redlock.Lock, error){
		func() (*redlock.Lock, error) { return locker.Lock(ctx, "invoice:42", time.Minute) },
		func() (*redlock.Lock, error) { return fencing.Lock(ctx, "ledger", time.Minute) },
		func() (*redlock.Lock, error) {
			return locker.Reentrant("account:7", "request-5f2a").Lock(ctx, time.Minute)
		},
		func() (*redlock.Lock, error) { return rw.RLock(ctx, time.Minute) },
		func() (*redlock.Lock, error) { return rw.Lock(ctx, time.Minute) },
		func() (*redlock.Lock, error) { return locker.Fair("deploy").Lock(ctx, time.Minute) },
		func() (*redlock.Lock, error) { return locker.Semaphore("exports", 2).Acquire(ctx, time.Minute) },
		func() (*redlock.Lock, error) {
			return locker.LockMulti(ctx, []string{"{order:7}:payment", "{order:7}:stock"}, time.Minute)
		},
	} {
		lk, err := take()
		if err != nil {
			log.Fatal(err)
		}
		if err := lk.Unlock(ctx); err != nil {
			log.Fatal(err)
		}
	}

	for _, s := range spans.GetSpans() {
		attrs := attribute.NewSet(s.Attributes...)
		kind, _ := attrs.Value("quorumlock.lock.kind")
		outcome, _ := attrs.Value("quorumlock.outcome")
		fmt.Printf("%-18s %-9s %s\n", s.Name, kind.AsString(), outcome.AsString())
	}
	// Output:
	// quorumlock.acquire lock      acquired
	// quorumlock.hold    lock      released
	// quorumlock.acquire fenced    acquired
	// quorumlock.hold    fenced    released
	// quorumlock.acquire reentrant acquired
	// quorumlock.hold    reentrant released
	// quorumlock.acquire read      acquired
	// quorumlock.hold    read      released
	// quorumlock.acquire write     acquired
	// quorumlock.hold    write     released
	// quorumlock.acquire fair      acquired
	// quorumlock.hold    fair      released
	// quorumlock.acquire semaphore acquired
	// quorumlock.hold    semaphore released
	// quorumlock.acquire multi     acquired
	// quorumlock.hold    multi     released
}

// The outcome of a failed acquisition says what the masters said, also
// when the call waited until its deadline: not_acquired when the lock is
// held (no fault: the span's status stays Unset), unavailable when too few
// masters answered (the lock may well be free), and timeout or canceled
// only when nothing was learned before the context ended.
func Example_outcomes() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	obs := otel.NewObserver(otel.WithTracerProvider(tp))

	// In a real program: pool.New nodes for your masters, as in
	// ExampleNewObserver.
	locker, err := redlock.New(exampleNodes(), redlock.Config{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close(context.Background())
	// Masters that are down: nothing listens on these ports.
	var down []redlock.Node
	for _, addr := range []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"} {
		n := pool.New(pool.Config{Addr: addr})
		defer n.Close()
		down = append(down, n)
	}
	unreachable, err := redlock.New(down, redlock.Config{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer unreachable.Close(context.Background())

	ctx := context.Background()
	holder, err := locker.Lock(ctx, "report:daily", time.Minute) // acquired
	if err != nil {
		log.Fatal(err)
	}
	defer holder.Unlock(ctx)
	locker.TryLock(ctx, "report:daily", time.Minute) // not_acquired: held

	deadline, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	locker.Lock(deadline, "report:daily", time.Minute) // not_acquired: held until the deadline

	deadline, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	// A short TTL: Close waits for the releases sent again to the masters
	// that are down until it passed.
	_, err = unreachable.Lock(deadline, "report:daily", time.Second) // unavailable
	fmt.Println("matches ErrUnavailable:", errors.Is(err, redlock.ErrUnavailable))

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	locker.Lock(canceled, "report:daily", time.Minute) // canceled: nothing sent

	for _, s := range spans.GetSpans() {
		if s.Name != "quorumlock.acquire" {
			continue // a master that fails is traced too (quorumlock.node_down)
		}
		attrs := attribute.NewSet(s.Attributes...)
		outcome, _ := attrs.Value("quorumlock.outcome")
		fmt.Printf("%-12s status %s\n", outcome.AsString(), s.Status.Code)
	}
	// Output:
	// matches ErrUnavailable: true
	// acquired     status Unset
	// not_acquired status Unset
	// not_acquired status Unset
	// unavailable  status Error
	// canceled     status Error
}

// A master that stops answering is traced once, not once per failed call:
// a Lock that waits on it fails a call to it every round, and each failed
// call only counts in quorumlock.node.errors. A Locker tells the Observer
// (a redlock.NodeStateObserver) when the master starts failing and when it
// answers again; the events are told here by hand, as a Locker with
// redlock.Config{Observer: obs} tells them.
func Example_nodeState() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	obs := otel.NewObserver(otel.WithMeterProvider(mp), otel.WithTracerProvider(tp))

	refused := errors.New("dial tcp 10.0.0.3:6379: connect: connection refused")
	states := obs.(redlock.NodeStateObserver)
	states.NodeState(redlock.NodeStateEvent{Addr: "10.0.0.3:6379", Err: refused})
	for range 278 {
		obs.NodeError(redlock.NodeErrorEvent{Op: "lock", Addr: "10.0.0.3:6379", Err: refused})
	}
	states.NodeState(redlock.NodeStateEvent{Addr: "10.0.0.3:6379", Up: true})

	for _, s := range spans.GetSpans() {
		attrs := attribute.NewSet(s.Attributes...)
		addr, _ := attrs.Value("quorumlock.node.address")
		fmt.Println(s.Name, addr.AsString(), s.Status.Code)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			fmt.Printf("%s{%s} %d\n", m.Name, dp.Attributes.Encoded(attribute.DefaultEncoder()), dp.Value)
		}
	}
	// Output:
	// quorumlock.node_down 10.0.0.3:6379 Error
	// quorumlock.node_up 10.0.0.3:6379 Unset
	// quorumlock.node.errors{error.type=error,quorumlock.node.address=10.0.0.3:6379,quorumlock.node.op=lock} 278
}

// Record into an in-memory reader and print what a Locker's calls left
// there. The events are the ones a Locker made with
// redlock.Config{Observer: obs} reports for a Lock that waited 3ms, a
// TryLock that found the lock held, and an Unlock after two seconds.
func Example_metrics() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs := otel.NewObserver(otel.WithMeterProvider(mp))

	held := &redlock.QuorumError{Op: "lock", Key: "invoice:42", Nodes: 3, Quorum: 2, Refused: 3}
	obs.Acquire(redlock.AcquireEvent{Key: "invoice:42", Kind: redlock.KindLock, Wait: 3 * time.Millisecond, Attempts: 1})
	obs.Acquire(redlock.AcquireEvent{Key: "invoice:42", Kind: redlock.KindLock, Wait: time.Millisecond, Attempts: 1, Err: held})
	obs.Release(redlock.ReleaseEvent{Key: "invoice:42", Kind: redlock.KindLock, Held: 2 * time.Second})

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s{%s} %d", m.Name, dp.Attributes.Encoded(attribute.DefaultEncoder()), dp.Value))
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s{%s} count=%d sum=%gs", m.Name, dp.Attributes.Encoded(attribute.DefaultEncoder()), dp.Count, dp.Sum))
				}
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// quorumlock.acquire.duration{quorumlock.lock.kind=lock,quorumlock.outcome=acquired} count=1 sum=0.003s
	// quorumlock.acquire.duration{quorumlock.lock.kind=lock,quorumlock.outcome=not_acquired} count=1 sum=0.001s
	// quorumlock.acquisitions{quorumlock.lock.kind=lock,quorumlock.outcome=acquired} 1
	// quorumlock.acquisitions{quorumlock.lock.kind=lock,quorumlock.outcome=not_acquired} 1
	// quorumlock.hold.duration{quorumlock.lock.kind=lock,quorumlock.outcome=released} count=1 sum=2s
}
