package redlock

import (
	"context"
	"log/slog"
)

// SlogObserver returns an Observer that logs every event to logger:
// successes at Debug, failures and node errors at Warn, losses at Error.
// Each record carries the key, the kind and the event's fields as
// attributes.
func SlogObserver(logger *slog.Logger) Observer {
	return slogObserver{logger}
}

type slogObserver struct{ log *slog.Logger }

// level is Debug for a success and Warn for a failure.
func level(err error) slog.Level {
	if err != nil {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

func (o slogObserver) Acquire(e AcquireEvent) {
	o.log.LogAttrs(context.Background(), level(e.Err), "redlock: acquire",
		slog.String("key", e.Key), slog.String("kind", e.Kind),
		slog.Duration("wait", e.Wait), slog.Int("attempts", e.Attempts), errAttr(e.Err))
}

func (o slogObserver) Release(e ReleaseEvent) {
	o.log.LogAttrs(context.Background(), level(e.Err), "redlock: release",
		slog.String("key", e.Key), slog.String("kind", e.Kind),
		slog.Duration("held", e.Held), errAttr(e.Err))
}

func (o slogObserver) Renew(e RenewEvent) {
	o.log.LogAttrs(context.Background(), level(e.Err), "redlock: renew",
		slog.String("key", e.Key), slog.String("kind", e.Kind),
		slog.Bool("auto", e.Auto), slog.Time("until", e.Until), errAttr(e.Err))
}

func (o slogObserver) Lost(e LostEvent) {
	o.log.LogAttrs(context.Background(), slog.LevelError, "redlock: lost",
		slog.String("key", e.Key), slog.String("kind", e.Kind), errAttr(e.Cause))
}

func (o slogObserver) NodeError(e NodeErrorEvent) {
	o.log.LogAttrs(context.Background(), slog.LevelWarn, "redlock: node error",
		slog.String("op", e.Op), slog.String("addr", e.Addr), errAttr(e.Err))
}

// errAttr is the error, or an empty attribute (which handlers drop) for
// nil.
func errAttr(err error) slog.Attr {
	if err == nil {
		return slog.Attr{}
	}
	return slog.Any("err", err)
}
