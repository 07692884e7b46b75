package otel

import (
	"context"
	"errors"

	"github.com/quorumlock/quorumlock/redlock"
)

// The values of the quorumlock.outcome attribute. A success is
// OutcomeAcquired, OutcomeReleased or OutcomeRenewed; a failure is
// classified by its error, in this order of precedence.
const (
	OutcomeAcquired = "acquired" // the acquisition succeeded
	OutcomeReleased = "released" // the Unlock succeeded
	OutcomeRenewed  = "renewed"  // the Extend succeeded

	OutcomeInvalid  = "invalid"  // bad input (matches redlock.ErrInvalid); nothing was sent
	OutcomeCanceled = "canceled" // the caller's context was canceled first
	OutcomeTimeout  = "timeout"  // the caller's context's deadline passed first
	OutcomeLate     = "late"     // a quorum granted, but only after the validity was used up
	// OutcomeNotAcquired: the lock is held by someone else (a master
	// refused it).
	OutcomeNotAcquired = "not_acquired"
	// OutcomeLost: an Extend or Unlock found the lock gone (a master
	// refused, or the validity had passed).
	OutcomeLost = "lost"
	// OutcomeUnavailable: too few masters answered; none refused.
	OutcomeUnavailable = "unavailable"
	OutcomeError       = "error" // anything else
)

// outcome classifies the result of an operation whose success is called
// success. A *redlock.QuorumError is read field by field: its error chain
// also holds each master's error, and a master's own timeout must not pass
// for the caller's context ending.
func outcome(err error, success string) string {
	if err == nil {
		return success
	}
	var qerr *redlock.QuorumError
	if errors.As(err, &qerr) {
		switch {
		case qerr.Cause != nil:
			return contextOutcome(qerr.Cause)
		case qerr.Late:
			return OutcomeLate
		case qerr.Refused > 0:
			return refused(err)
		case qerr.Failed > 0:
			return OutcomeUnavailable
		}
		return refused(err)
	}
	if errors.Is(err, redlock.ErrInvalid) {
		return OutcomeInvalid
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

// errorType is the error.type attribute of a master's failed call.
func errorType(err error) string {
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &timeout) && timeout.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}
