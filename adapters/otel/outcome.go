package otel

import (
	"context"
	"errors"

	"github.com/quorumlock/quorumlock/quorum"
	"github.com/quorumlock/quorumlock/redlock"
)

// The values of the quorumlock.outcome attribute. A success is
// OutcomeAcquired, OutcomeReleased or OutcomeRenewed. A failure is named by
// what its last round saw (masters that refused, failed, or had not
// answered when the call ended), also when the call then waited until its
// context ended; only a call that asked the masters nothing is named by
// why it ended. So a Lock that waited until its deadline for a lock
// someone else held is OutcomeNotAcquired, one that waited on masters
// that did not answer is OutcomeUnavailable, and OutcomeTimeout is left
// for a call that learned nothing before its deadline.
const (
	OutcomeAcquired = "acquired" // the acquisition succeeded
	OutcomeReleased = "released" // the Unlock succeeded
	OutcomeRenewed  = "renewed"  // the Extend succeeded

	// OutcomeNotAcquired: the lock is held by someone else: a master
	// refused it (in the last round, also when the call then waited until
	// its context ended).
	OutcomeNotAcquired = "not_acquired"
	// OutcomeLost: an Extend or Unlock found the lock gone (a master
	// refused, or the validity had passed).
	OutcomeLost = "lost"
	// OutcomeUnavailable: too few masters answered and none refused (the
	// error matches redlock.ErrUnavailable): Redis is down, cut off or too
	// slow; the lock may well be free. Also when the call waited until its
	// context ended on such masters.
	OutcomeUnavailable = "unavailable"
	// OutcomeInvalid: bad input, nothing sent; or a master that cannot
	// give what the Config asks (the QuorumError is Misconfigured): both
	// match redlock.ErrInvalid, and no retry mends them.
	OutcomeInvalid = "invalid"
	// OutcomeLate: a quorum granted, but only after the validity was used
	// up.
	OutcomeLate = "late"
	// OutcomeTimeout and OutcomeCanceled: the caller's context's deadline
	// passed, or it was canceled, before the call asked the masters
	// anything: nothing was learned about the lock or the masters. (A
	// round sent and still unanswered when the context ended is
	// OutcomeUnavailable: the masters were too slow.)
	OutcomeTimeout  = "timeout"
	OutcomeCanceled = "canceled"
	OutcomeError    = "error" // anything else (a Locker closed, a fencing token not written back)
)

// outcome classifies the result of an operation whose success is called
// success. A *redlock.QuorumError is read field by field, by what its
// round saw: its error chain also holds each master's error and the
// caller's context's, and neither a master's own timeout nor the call's
// deadline must hide that the masters refused or did not answer.
func outcome(err error, success string) string {
	if err == nil {
		return success
	}
	var qerr *redlock.QuorumError
	if errors.As(err, &qerr) {
		switch {
		case qerr.Late:
			return OutcomeLate
		case qerr.Misconfigured():
			return OutcomeInvalid
		case qerr.Refused > 0:
			return refused(err)
		case qerr.Unavailable():
			return OutcomeUnavailable
		case qerr.Cause != nil:
			return contextOutcome(qerr.Cause)
		}
		return refused(err)
	}
	switch {
	case errors.Is(err, redlock.ErrInvalid):
		return OutcomeInvalid
	case errors.Is(err, redlock.ErrUnavailable):
		return OutcomeUnavailable
	}
	if o := contextOutcome(err); o != OutcomeError {
		return o
	}
	return refused(err)
}

// contextOutcome tells a context's end from other errors.
func contextOutcome(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	}
	return OutcomeError
}

// refused names a failure by the sentinel it matches.
func refused(err error) string {
	switch {
	case errors.Is(err, redlock.ErrNotAcquired):
		return OutcomeNotAcquired
	case errors.Is(err, redlock.ErrLockLost):
		return OutcomeLost
	}
	return OutcomeError
}

// errorType is the error.type attribute of a master's failed call: a
// master that had not answered within the node timeout (quorum.ErrNoAnswer)
// timed out too.
func errorType(err error) string {
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, quorum.ErrNoAnswer),
		errors.As(err, &timeout) && timeout.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}
