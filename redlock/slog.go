package redlock

import (
	"log/slog"
)

// SlogObserver returns an Observer that logs to logger, each record with
// the context of the call it is about (so that a handler can add the
// request's trace id) and the event's fields as attributes: successful
// acquisitions, releases and renewals at Debug, failed ones at Warn, a
// lost lock at Error; a master that starts failing at Warn, once, and at
// Info when it answers again (it is a NodeStateObserver); each failed call
// to a master only at Debug, so that a Lock waiting on dead masters logs
// two lines, not one per attempt and master.
func SlogObserver(logger *slog.Logger) Observer {
	return slogObserver{logger}
}

type slogObserver struct{ log *slog.Logger }

var _ NodeStateObserver = slogObserver{}

// level is Debug for a success and Warn for a failure.
func level(err error) slog.Level {
	if err != nil {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

func (o slogObserver) Acquire(e AcquireEvent) {
	o.log.LogAttrs(e.Context(), level(e.Err), "redlock: acquire",
		slog.String("key", e.Key), slog.String("kind", e.Kind),
		slog.Duration("wait", e.Wait), slog.Int("attempts", e.Attempts), errAttr(e.Err))
}

func (o slogObserver) Release(e ReleaseEvent) {
	o.log.LogAttrs(e.Context(), level(e.Err), "redlock: release",
		slog.String("key", e.Key), slog.String("kind", e.Kind),
		slog.Duration("held", e.Held), errAttr(e.Err))
}

func (o slogObserver) Renew(e RenewEvent) {
	o.log.LogAttrs(e.Context(), level(e.Err), "redlock: renew",
		slog.String("key", e.Key), slog.String("kind", e.Kind),
		slog.Bool("auto", e.Auto), slog.Time("until", e.Until), errAttr(e.Err))
}

func (o slogObserver) Lost(e LostEvent) {
	o.log.LogAttrs(e.Context(), slog.LevelError, "redlock: lost",
		slog.String("key", e.Key), slog.String("kind", e.Kind), errAttr(e.Cause))
}

func (o slogObserver) NodeError(e NodeErrorEvent) {
	o.log.LogAttrs(e.Context(), slog.LevelDebug, "redlock: node error",
		slog.String("op", e.Op), slog.String("addr", e.Addr), errAttr(e.Err))
}

func (o slogObserver) NodeState(e NodeStateEvent) {
	if e.Up {
		o.log.LogAttrs(e.Context(), slog.LevelInfo, "redlock: master answers again", slog.String("addr", e.Addr))
		return
	}
	o.log.LogAttrs(e.Context(), slog.LevelWarn, "redlock: master failing", slog.String("addr", e.Addr), errAttr(e.Err))
}

// errAttr is the error, or an empty attribute (which handlers drop) for
// nil.
func errAttr(err error) slog.Attr {
	if err == nil {
		return slog.Attr{}
	}
	return slog.Any("err", err)
}
