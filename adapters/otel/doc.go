// Package otel reports what a redlock.Locker does as OpenTelemetry metrics
// and spans. Set the Observer that NewObserver returns as
// redlock.Config.Observer:
//
//	locker, err := redlock.New(nodes, redlock.Config{Observer: otel.NewObserver()})
//
// By default it uses otel's global MeterProvider and TracerProvider (as set
// with go.opentelemetry.io/otel.SetMeterProvider and SetTracerProvider);
// WithMeterProvider and WithTracerProvider choose others. The Observer is
// also a redlock.NodeStateObserver, which redlock.New detects: a wrapper
// around it must keep its NodeState method, or masters' outages go
// untraced.
//
// It sees every kind of lock a Locker has, each under its kind (the
// quorumlock.lock.kind attribute, the redlock.Kind constants): "lock"
// (Lock, TryLock), "fenced" (the same with Config.Fencing), "reentrant"
// (Reentrant), "read" and "write" (RWMutex's RLock and Lock), "fair"
// (Fair), "semaphore" (Semaphore's Acquire) and "multi" (LockMulti).
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
// The attributes are quorumlock.lock.kind (above), quorumlock.outcome (one
// of the Outcome constants, below), quorumlock.renewal.auto,
// quorumlock.node.op ("lock", "extend", "unlock", "release" for the release
// of a failed attempt or a waiter's withdrawal, "guard" for the restart guard's records),
// quorumlock.node.address and error.type ("timeout" for a master that did
// not answer within the node timeout or a network timeout, "canceled", or
// "error").
//
// quorumlock.acquire.attempts counts the rounds an acquisition sent to the
// masters (1 when the lock was free): its distribution shows contention.
// quorumlock.acquire.duration is the time from the acquisition call until it
// returned, including every retry and wait; quorumlock.hold.duration is the
// time from the grant to the Unlock call. quorumlock.node.errors counts
// every failed call to a master: a Lock that waits on a dead master adds
// one each round, which is the rate to alert on. No metric carries the
// lock's key unless WithKeyAttribute is given: keys are often unbounded (an
// order id, a user id), and every distinct key would become its own time
// series.
//
// # Outcomes
//
// A success is "acquired", "released" or "renewed". A failure is named by
// what its last round saw (masters that refused, failed, or had not
// answered when the call ended), also when the call then waited until its
// context ended; only a call that asked the masters nothing is named by why
// it ended:
//
//   - "not_acquired": the lock is held by someone else (a master refused
//     it). A Lock that waited until its deadline for a held lock is
//     not_acquired, not timeout.
//   - "lost": an Extend or Unlock found the lock gone.
//   - "unavailable": too few masters answered in time and none refused (the
//     error matches redlock.ErrUnavailable): Redis is down, cut off or too
//     slow, and the lock may well be free. A Lock that waited until its
//     deadline on such masters is unavailable, not timeout.
//   - "invalid": bad input (nothing was sent), or a master that cannot give
//     what the Config asks (the QuorumError is Misconfigured); both match
//     redlock.ErrInvalid, and no retry mends them.
//   - "late": a quorum granted, but only after the validity was used up.
//   - "timeout", "canceled": the caller's context ended before the call
//     asked the masters anything: nothing was learned about the lock or the
//     masters. A round sent and still unanswered when the context ended is
//     "unavailable" (the masters were too slow), as redlock.ErrUnavailable
//     says.
//   - "error": anything else (a Locker closed, a fencing token not written
//     back).
//
// # Spans
//
// An Observer is told of an operation after it ended, with the context of
// the call it is about (the event's Context: the acquisition's, the
// Unlock's; the acquisition's for its auto-renewal and its loss; for a
// master's state, the call that saw it change). So each span is made after
// the fact with explicit timestamps (trace.WithTimestamp), as a child of
// the span in that context: it nests in the request's trace, and a log or
// metric exemplar of the same request finds it. A call made with no span in
// its context gives root spans:
//
//   - quorumlock.acquire, from the acquisition call to its return (start is
//     the end minus the event's Wait), with the key, kind, attempts and
//     outcome;
//   - quorumlock.hold, from the grant to the Unlock call, with the key, kind
//     and the release's outcome;
//   - quorumlock.lost, a span of zero length that carries the loss's cause
//     as an exception event, with the key and kind;
//   - quorumlock.node_down, a span of zero length when a master starts
//     failing (a first failed call after answered ones), with its address
//     and error.type, and the failure as an exception event;
//     quorumlock.node_up when it answers again, with its address.
//
// A failed call to a master makes no span of its own: a Lock that waits
// three seconds on a dead master fails hundreds of calls, which
// quorumlock.node.errors counts, and the outage is one quorumlock.node_down
// span (and one quorumlock.node_up when the master is back). The state is
// each Locker's: two Lockers that share the Observer each report the
// outage once.
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
