package nodeutil

import (
	"fmt"
	"reflect"
)

// OpenClientNode returns an adapter's Node (N, as for NewClientNode) with
// a client of its own, made from opt (the library's ClientOption, whose
// fields it reads by name: clientopt.go) with newClient (the library's
// NewClient) at the Node's first call, and again at later calls until one
// is made (Lazy): the libraries' NewClient connects, and fails while the
// master is down, so a service whose Nodes come from OpenClientNode starts
// with any master down, counts its votes as failed (with the connection's
// error) until it is back, and takes locks meanwhile with the others. A
// client is made by one call at a time, on a goroutine of its own, bounded
// by opt.Dialer.Timeout and not by the call's context. Close closes it.
// name and hooks are as for NewClientNode.
//
// It checks opt first (ClientOptions.Check): it refuses (ErrUnsafeOption)
// a ConnLifetime, under which the client resends the commands in flight
// on a connection it retires, and ReplicaOnly or SendToReplicas, which
// would send lock commands to a replica. It sets DisableRetry, since the
// client is the Node's alone, and DialCtxFn: a dial function that dials
// as opt says (its DialCtxFn, or DialFn, or the library's own way, TLS
// included) and then, before the client uses the connection, reads the
// master's identity on it (AUTH with opt's AuthCredentialsFn, or Username
// and Password, then IdentityCommands; dialident.go). A Sentinel
// client's connections to the Sentinels are left alone.
//
// Addr is opt's address when it names one, "cluster:" and its addresses
// sorted and joined by commas when it names several (a cluster's seeds),
// and "sentinel:" with the master set's name, "@" and the Sentinels'
// addresses for a Sentinel client (ClientOptions.Name).
func OpenClientNode[N ~struct{ *ClientNode[C] }, O any, C rueidisClient[C, D, B, A, S, SC, U, UC, Cmd, R, M], D rueidisDedicated[B, Cmd, R], B rueidisBuilder[A, S, SC, U, UC, Cmd], A rueidisArbitrary[A, Cmd], S rueidisChannels[SC], SC rueidisBuild[Cmd], U rueidisChannels[UC], UC rueidisBuild[Cmd], Cmd any, R rueidisResult, M ~string](name string, opt O, newClient func(O) (C, error), hooks func(d D, message func(channel string), subscription func(kind, channel string)) <-chan error) (*N, error) {
	o, err := newClientOption(opt)
	if err != nil {
		return nil, fmt.Errorf("%s: Open: %w", name, err)
	}
	s, err := readSettings(o)
	if err == nil {
		err = s.Check()
	}
	if err == nil {
		err = o.prepare(s, s.dial)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: Open: %w", name, err)
	}
	calls := callsOf[C](hooks)
	n := newClientNode(name, s.Name(), calls)
	n.ident = new(Identity)
	n.several = len(s.InitAddress) > 1 && s.MasterSet == ""
	n.own = NewLazy(func() (C, error) {
		// Each client gets a dialReader of its own: it learns which of
		// the client's dialers is the Sentinels'.
		r := &dialReader{ident: n.ident, next: s.dial, creds: s.creds, sentinel: s.MasterSet != ""}
		attempt := clientOption{reflect.New(o.v.Type()).Elem()}
		attempt.v.Set(o.v)
		if err := attempt.set("DialCtxFn", r.dial); err != nil {
			var zero C
			return zero, err
		}
		c, err := newClient(attempt.v.Interface().(O))
		if err == nil {
			n.cluster.Store(calls.cluster(c))
		}
		return c, err
	})
	n.exec.Client = n.own.Get
	return &N{n}, nil
}
