package otel_test

import (
	"context"
	"fmt"
	"log"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/quorumlock/quorumlock/adapters/otel"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Give a Locker the Observer; it records through otel's global providers,
// which the service sets up once (otel.SetMeterProvider and
// otel.SetTracerProvider of go.opentelemetry.io/otel).
func ExampleNewObserver() {
	var nodes []redlock.Node
	for _, addr := range []string{"redis-a:6379", "redis-b:6379", "redis-c:6379"} {
		nodes = append(nodes, pool.New(pool.Config{Addr: addr}))
	}
	locker, err := redlock.New(nodes, redlock.Config{Observer: otel.NewObserver()})
	if err != nil {
		log.Fatal(err)
	}
	_ = locker // every Lock, TryLock, Unlock and Extend is now measured
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
