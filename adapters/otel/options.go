package otel

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// An Option configures NewObserver.
type Option func(*config)

type config struct {
	meterProvider  metric.MeterProvider // nil: otel's global one
	tracerProvider trace.TracerProvider // nil: otel's global one
	keyAttribute   bool
}

// WithMeterProvider makes the Observer record its metrics through mp
// instead of otel's global MeterProvider. A nil mp keeps the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider = mp }
}

// WithTracerProvider makes the Observer start its spans through tp instead
// of otel's global TracerProvider. A nil tp keeps the global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// WithKeyAttribute adds the lock's key (attribute quorumlock.lock.key) to
// the metrics of acquisitions, holds, renewals and losses. Use it only when
// the keys are few and fixed: each distinct key is a time series of its own
// in every one of those metrics. Spans carry the key with or without it.
func WithKeyAttribute() Option {
	return func(c *config) { c.keyAttribute = true }
}
