package linearize_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/linearize"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ms = time.Millisecond

// grant is a granted acquire of lock id on key by client id, called at
// call, granted at at, valid until until.
func grant(id int64, key string, call, at, until time.Duration) linearize.Op {
	return linearize.Op{Kind: linearize.Acquire, Lock: id, Client: int(id), Key: key, Token: id,
		Call: call, Return: at, Outcome: linearize.Ok, Until: until}
}

// reader and owned are grants of a read lock and of a reentrant owner's hold.
func reader(id int64, key string, at, until time.Duration) linearize.Op {
	o := grant(id, key, at, at, until)
	o.Mode = linearize.Shared
	return o
}

func owned(id int64, owner string, key string, at, until time.Duration) linearize.Op {
	o := grant(id, key, at, at, until)
	o.Owner = owner
	return o
}

// release is the release of lock id, begun at call, answered at ret.
func release(id int64, call, ret time.Duration, out linearize.Outcome) linearize.Op {
	return linearize.Op{Kind: linearize.Release, Lock: id, Client: int(id), Call: call, Return: ret, Outcome: out}
}

// attempt is an acquire by client that did not grant a lock (out is Refused
// or Unknown).
func attempt(client int, key string, call, ret time.Duration, out linearize.Outcome) linearize.Op {
	return linearize.Op{Kind: linearize.Acquire, Client: client, Key: key, Call: call, Return: ret, Outcome: out}
}

// modes runs f with point windows and with call windows.
func modes(t *testing.T, f func(t *testing.T, opt linearize.Options)) {
	t.Helper()
	for _, windows := range []bool{false, true} {
		name := "points"
		if windows {
			name = "call windows"
		}
		t.Run(name, func(t *testing.T) { f(t, linearize.Options{CallWindows: windows}) })
	}
}
