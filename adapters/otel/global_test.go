package otel_test

import (
	"context"
	"testing"

	otelapi "go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/quorumlock/quorumlock/adapters/otel"
	"github.com/quorumlock/quorumlock/redlock"
)

// globalsSet is set once TestGlobalProviders has set the process's global
// providers: otel hands a provider set later on to what was made before
// only the first time, so a second run (-count) has nothing to test.
var globalsSet bool

// Without options the Observer records through otel's global providers,
// also when they are set after it was made. This test sets the process's
// global providers; no other test in this package uses them.
func TestGlobalProviders(t *testing.T) {
	if globalsSet {
		t.Skip("otel's global providers were set by an earlier run of this test (-count): only the first is delegated to")
	}
	globalsSet = true
	obs := otel.NewObserver()

	r := &recorder{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	t.Cleanup(func() {
		mp.Shutdown(context.Background())
		tp.Shutdown(context.Background())
	})
	otelapi.SetMeterProvider(mp)
	otelapi.SetTracerProvider(tp)

	obs.Acquire(redlock.AcquireEvent{Key: "k", Kind: "lock", Attempts: 1})
	wantPoints(t, r.points(t), map[string]point{
		"quorumlock.acquisitions{quorumlock.lock.kind=lock,quorumlock.outcome=acquired}":     {Sum: 1},
		"quorumlock.acquire.duration{quorumlock.lock.kind=lock,quorumlock.outcome=acquired}": {Count: 1},
	})
	onlySpan(t, r, "quorumlock.acquire")
}
