package otel

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Bucket boundaries, in seconds. An acquisition takes a round trip when
// free and up to the caller's deadline when contended; a hold lasts as
// long as the work it protects.
var (
	waitBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	holdBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
)

// instruments are the Observer's metrics; see the package documentation.
type instruments struct {
	acquisitions metric.Int64Counter
	acquireWait  metric.Float64Histogram
	hold         metric.Float64Histogram
	attempts     metric.Int64Histogram
	renewals     metric.Int64Counter
	losses       metric.Int64Counter
	nodeErrors   metric.Int64Counter
}

func newInstruments(m metric.Meter) instruments {
	return instruments{
		acquisitions: counter(m.Int64Counter("quorumlock.acquisitions",
			metric.WithDescription("Lock acquisition calls, by lock kind and outcome."),
			metric.WithUnit("{acquisition}"))),
		acquireWait: histogram(m.Float64Histogram("quorumlock.acquire.duration",
			metric.WithDescription("Time from a lock acquisition call until it returned, retries and waits included."),
			metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(waitBuckets...))),
		hold: histogram(m.Float64Histogram("quorumlock.hold.duration",
			metric.WithDescription("Time a lock was held, from its grant to the Unlock call."),
			metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(holdBuckets...))),
		attempts: intHistogram(m.Int64Histogram("quorumlock.acquire.attempts",
			metric.WithDescription("Rounds sent to the masters per acquisition call: 1 when the lock was free, more under contention."),
			metric.WithUnit("{attempt}"),
			metric.WithExplicitBucketBoundaries(1, 2, 3, 5, 10, 20, 50, 100))),
		renewals: counter(m.Int64Counter("quorumlock.renewals",
			metric.WithDescription("Lock extensions, manual or automatic, by outcome."),
			metric.WithUnit("{renewal}"))),
		losses: counter(m.Int64Counter("quorumlock.losses",
			metric.WithDescription("Locks that ended other than by Unlock: their validity passed, or a renewal found them gone."),
			metric.WithUnit("{loss}"))),
		nodeErrors: counter(m.Int64Counter("quorumlock.node.errors",
			metric.WithDescription("Failed calls to a Redis master, by operation and master."),
			metric.WithUnit("{error}"))),
	}
}

// counter and histogram pass an instrument on, or a no-op one when the
// meter gave none. An error (a conflicting registration, say) goes to
// otel's global error handler, as otel's own instrumentation does:
// NewObserver has no error to return.
func counter(c metric.Int64Counter, err error) metric.Int64Counter {
	if err != nil {
		otel.Handle(err)
	}
	if c == nil {
		return noop.Int64Counter{}
	}
	return c
}

func intHistogram(h metric.Int64Histogram, err error) metric.Int64Histogram {
	if err != nil {
		otel.Handle(err)
	}
	if h == nil {
		return noop.Int64Histogram{}
	}
	return h
}

func histogram(h metric.Float64Histogram, err error) metric.Float64Histogram {
	if err != nil {
		otel.Handle(err)
	}
	if h == nil {
		return noop.Float64Histogram{}
	}
	return h
}
