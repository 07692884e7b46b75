package otel

import (
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/quorumlock/quorumlock/redlock"
)

// ScopeName is the instrumentation scope of the Observer's meter and
// tracer.
const ScopeName = "github.com/quorumlock/quorumlock/adapters/otel"

// The attributes; see the package documentation.
const (
	attrKey       = attribute.Key("quorumlock.lock.key")
	attrKind      = attribute.Key("quorumlock.lock.kind")
	attrOutcome   = attribute.Key("quorumlock.outcome")
	attrAttempts  = attribute.Key("quorumlock.attempts")
	attrAuto      = attribute.Key("quorumlock.renewal.auto")
	attrOp        = attribute.Key("quorumlock.node.op")
	attrAddr      = attribute.Key("quorumlock.node.address")
	attrErrorType = attribute.Key("error.type")
)

// observer is the redlock.Observer of NewObserver. Its instruments and
// tracer are safe for concurrent use, and it keeps no other state.
type observer struct {
	inst         instruments
	tracer       trace.Tracer
	keyAttribute bool
}

var (
	_ redlock.Observer          = (*observer)(nil)
	_ redlock.NodeStateObserver = (*observer)(nil)
)

// NewObserver returns a redlock.Observer that records the metrics and
// spans described in the package documentation, through otel's global
// MeterProvider and TracerProvider unless opts name others. It is also a
// redlock.NodeStateObserver, which a Locker detects in redlock.New: a
// wrapper around it must keep that method, or masters' outages go
// untraced. Its methods are safe for concurrent use. Metric instruments
// are created here; an error creating one goes to otel's global error
// handler, and that metric is then not recorded.
func NewObserver(opts ...Option) redlock.Observer {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	mp, tp := c.meterProvider, c.tracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &observer{
		inst:         newInstruments(mp.Meter(ScopeName)),
		tracer:       tp.Tracer(ScopeName),
		keyAttribute: c.keyAttribute,
	}
}

// Acquire counts the acquisition, records its wait, and makes its span.
func (o *observer) Acquire(e redlock.AcquireEvent) {
	end := time.Now()
	out := outcome(e.Err, OutcomeAcquired)
	base := []attribute.KeyValue{attrKind.String(e.Kind), attrOutcome.String(out)}
	set := o.metricAttrs(e.Key, base)
	ctx := e.Context()
	o.inst.acquisitions.Add(ctx, 1, set)
	o.inst.acquireWait.Record(ctx, e.Wait.Seconds(), set)
	if e.Attempts > 0 {
		o.inst.attempts.Record(ctx, int64(e.Attempts), set)
	}
	o.span(ctx, "quorumlock.acquire", end.Add(-e.Wait), end, e.Err, out != OutcomeNotAcquired,
		append(base, attrKey.String(e.Key), attrAttempts.Int(e.Attempts))...)
}

// Release records the hold time and makes the hold's span.
func (o *observer) Release(e redlock.ReleaseEvent) {
	end := time.Now()
	base := []attribute.KeyValue{attrKind.String(e.Kind), attrOutcome.String(outcome(e.Err, OutcomeReleased))}
	o.inst.hold.Record(e.Context(), e.Held.Seconds(), o.metricAttrs(e.Key, base))
	o.span(e.Context(), "quorumlock.hold", end.Add(-e.Held), end, e.Err, true, append(base, attrKey.String(e.Key))...)
}

// Renew counts the renewal. Renewals make no span.
func (o *observer) Renew(e redlock.RenewEvent) {
	base := []attribute.KeyValue{
		attrKind.String(e.Kind),
		attrOutcome.String(outcome(e.Err, OutcomeRenewed)),
		attrAuto.Bool(e.Auto),
	}
	o.inst.renewals.Add(e.Context(), 1, o.metricAttrs(e.Key, base))
}

// Lost counts the loss and makes a span of zero length that carries its
// cause.
func (o *observer) Lost(e redlock.LostEvent) {
	now := time.Now()
	base := []attribute.KeyValue{attrKind.String(e.Kind)}
	o.inst.losses.Add(e.Context(), 1, o.metricAttrs(e.Key, base))
	o.span(e.Context(), "quorumlock.lost", now, now, e.Cause, true, append(base, attrKey.String(e.Key))...)
}

// NodeError counts the failed call, by operation, master and error type.
// It makes no span: a Lock that waits on a dead master fails a call to it
// every round, and NodeState tells the master's failure once. The master's
// address is a metric attribute always: a Locker has few masters.
func (o *observer) NodeError(e redlock.NodeErrorEvent) {
	o.inst.nodeErrors.Add(e.Context(), 1, metric.WithAttributeSet(attribute.NewSet(
		attrOp.String(e.Op),
		attrAddr.String(e.Addr),
		attrErrorType.String(errorType(e.Err)),
	)))
}

// NodeState makes a span of zero length when a master starts failing
// (quorumlock.node_down, with its error as an exception event) and when it
// answers again (quorumlock.node_up): one pair per outage, however many
// calls failed in it.
func (o *observer) NodeState(e redlock.NodeStateEvent) {
	now := time.Now()
	if e.Up {
		o.span(e.Context(), "quorumlock.node_up", now, now, nil, false, attrAddr.String(e.Addr))
		return
	}
	o.span(e.Context(), "quorumlock.node_down", now, now, e.Err, true,
		attrAddr.String(e.Addr), attrErrorType.String(errorType(e.Err)))
}

// metricAttrs is base, plus the key when WithKeyAttribute asked for it.
func (o *observer) metricAttrs(key string, base []attribute.KeyValue) metric.MeasurementOption {
	kv := base
	if o.keyAttribute {
		kv = append(kv[:len(kv):len(kv)], attrKey.String(key))
	}
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}
