// Package otel reports what a redlock.Locker does as OpenTelemetry metrics
// and spans. Set the Observer that NewObserver returns as
// redlock.Config.Observer:
//
//	locker, err := redlock.New(nodes, redlock.Config{Observer: otel.NewObserver()})
//
// By default it uses otel's global MeterProvider and TracerProvider (as set
// with go.opentelemetry.io/otel.SetMeterProvider and SetTracerProvider);
// WithMeterProvider and WithTracerProvider choose others.
//
// # Metrics
//
//	quorumlock.acquisitions      counter    {acquisition}  kind, outcome
//	quorumlock.acquire.duration  histogram  s              kind, outcome
//	quorumlock.acquire.attempts  histogram  {attempt}      kind, outcome
//	quorumlock.hold.duration     histogram  s              kind, outcome
//	quorumlock.renewals          counter    {renewal}      kind, outcome, auto
//	quorumlock.losses            counter    {loss}         kind
//	quorumlock.node.errors       counter    {error}        op, node address, error.type
//
// The attributes are quorumlock.lock.kind ("lock", "fenced", "reentrant",
// "read", "write"), quorumlock.outcome (one of the Outcome constants), quorumlock.renewal.auto,
// quorumlock.node.op ("lock", "extend", "unlock", "release"),
// quorumlock.node.address and error.type ("timeout", "canceled" or "error").
// quorumlock.acquire.attempts counts the rounds an acquisition sent to the
// masters (1 when the lock was free): its distribution shows contention.
// quorumlock.acquire.duration is the time from the acquisition call until it
// returned, including every retry and wait; quorumlock.hold.duration is the
// time from the grant to the Unlock call. No metric carries the lock's key
// unless WithKeyAttribute is given: keys are often unbounded (an order id, a
// user id), and every distinct key would become its own time series.
//
// # Spans
//
// An Observer is told of an operation after it ended, with the context of
// the call it is about (the event's Context: the acquisition's, the
// Unlock's; the acquisition's for its auto-renewal and its loss). So each
// span is made after the fact with explicit timestamps
// (trace.WithTimestamp), as a child of the span in that context: it nests
// in the request's trace, and a log or metric exemplar of the same request
// finds it. A call made with no span in its context gives root spans:
//
//   - quorumlock.acquire, from the acquisition call to its return (start is
//     the end minus the event's Wait), with the key, kind, attempts and
//     outcome;
//   - quorumlock.hold, from the grant to the Unlock call, with the key, kind
//     and the release's outcome;
//   - quorumlock.lost and quorumlock.node_error, spans of zero length that
//     carry the loss's cause or the master's error as an exception event.
//
// Renewals are counted but not traced: an auto-renewed lock renews a few
// times per TTL. Individual masters' calls, the backoff between attempts and
// the waits for a release are not traced either: the Observer does not see
// them. To place a lock's spans inside a request's trace, wrap the call in a
// span of your own; the key attribute (spans always carry it) joins the two.
//
// A span's status is Error when the operation failed, except an acquisition
// whose outcome is OutcomeNotAcquired: a lock held by someone else is an
// answer, not a fault.
package otel
