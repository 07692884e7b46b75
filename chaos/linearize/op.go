package linearize

import (
	"fmt"
	"time"
)

// OpKind is the kind of an Op.
type OpKind int

const (
	// Acquire is one Lock, TryLock or RLock call, or one nested hold of a
	// reentrant lock.
	Acquire OpKind = iota + 1
	// Release is one Unlock or RUnlock call of one acquisition.
	Release
)

// Mode says which holds of one key may coexist.
type Mode int

const (
	// Exclusive holds exclude every other hold of the key, except holds of
	// the same non-empty Owner: plain and fenced locks, read-write writers,
	// reentrant holds.
	Exclusive Mode = iota
	// Shared holds coexist with each other and exclude Exclusive ones:
	// read-write readers.
	Shared
)

// Outcome is what a call told its caller.
type Outcome int

const (
	// Ok: the lock was granted, or the release was sent and answered.
	Ok Outcome = iota + 1
	// Refused: the call returned without the lock (not acquired), or the
	// release failed.
	Refused
	// Unknown: the call timed out or failed in transport; it may have been
	// applied on the masters (possibly applied).
	Unknown
)

// Op is one recorded operation. Times are offsets on the history's one
// monotonic timeline (the same as the chaos checker's).
type Op struct {
	Kind OpKind
	// Lock identifies an acquisition: it is required, and unique, on an
	// Acquire whose Outcome is Ok, and a Release carries the Lock of the
	// acquisition it ends. Refused and Unknown acquires may leave it 0.
	Lock int64
	// Client is the client that made the call.
	Client int
	// Key is the logical key of the lock. Each key is checked apart. A
	// Release may leave it empty: it belongs to its acquisition's key.
	Key string
	// Mode and Owner say which holds may coexist (Acquire only): see Mode.
	// Owner is the reentrant owner; holds with one non-empty Owner are one
	// ownership.
	Mode  Mode
	Owner string
	// Token is the fencing token; it is shown in visualizations only.
	Token int64
	// Call is the invocation; Return the response. For a granted Acquire,
	// Return is when the client learned it holds the lock. For a Release,
	// Call is when the holder began to release it (and stopped using the
	// resource).
	Call, Return time.Duration
	// Outcome is what the call told its caller.
	Outcome Outcome
	// Until is the end of the validity of a granted Acquire: the end of the
	// hold, unless it is released earlier.
	Until time.Duration
}

// String formats an op for logs and visualizations.
func (o Op) String() string {
	return fmt.Sprintf("%v %s lock %d (client %d, key %q, token %d) [%v, %v] %v",
		o.Kind, o.Mode.describe(o.Owner), o.Lock, o.Client, o.Key, o.Token, o.Call, o.Return, o.Outcome)
}

func (k OpKind) String() string {
	switch k {
	case Acquire:
		return "acquire"
	case Release:
		return "release"
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

func (m Mode) String() string {
	switch m {
	case Exclusive:
		return "exclusive"
	case Shared:
		return "shared"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

func (m Mode) describe(owner string) string {
	if owner == "" {
		return m.String()
	}
	return m.String() + " owner " + owner
}

func (o Outcome) String() string {
	switch o {
	case Ok:
		return "ok"
	case Refused:
		return "refused"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}
