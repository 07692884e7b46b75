package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// span makes a span from start to end after the fact, a child of the span
// in ctx (the event's: the context of the call it is about), so that it
// nests in the request's trace; the root of a trace of its own when ctx
// has no span. A non-nil err is recorded as an exception event at end, and
// sets the status to Error when fault is true.
func (o *observer) span(ctx context.Context, name string, start, end time.Time, err error, fault bool, attrs ...attribute.KeyValue) {
	_, sp := o.tracer.Start(ctx, name,
		trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrs...))
	if err != nil {
		sp.RecordError(err, trace.WithTimestamp(end))
		if fault {
			sp.SetStatus(codes.Error, err.Error())
		}
	}
	sp.End(trace.WithTimestamp(end))
}
