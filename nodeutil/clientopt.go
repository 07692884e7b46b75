package nodeutil

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"time"
)

// What Open reads from, and sets in, a rueidis or valkey-go ClientOption.
// The two structs name their fields alike (valkey-go is a fork of rueidis)
// but are types of two libraries, so ClientNode reaches the fields by
// name, once, when a Node is opened: one mapping for both, instead of one
// in each adapter. A field missing, or of another type, fails Open with an
// error that names it (a library version that renamed it); each adapter's
// tests open Nodes, so such a version fails them.

// clientOption is a copy of a ClientOption that Open may change.
type clientOption struct {
	v reflect.Value // addressable
}

// newClientOption copies opt, which must be a struct.
func newClientOption[O any](opt O) (clientOption, error) {
	v := reflect.New(reflect.TypeFor[O]()).Elem()
	if v.Kind() != reflect.Struct {
		return clientOption{}, fmt.Errorf("nodeutil: %T is not a client option struct", opt)
	}
	v.Set(reflect.ValueOf(opt))
	return clientOption{v}, nil
}

// field is the field path (names joined by dots) of o.
func (o clientOption) field(path string) (reflect.Value, error) {
	v := o.v
	for name := range strings.SplitSeq(path, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("nodeutil: %s has no field %s", o.v.Type(), path)
		}
		if v = v.FieldByName(name); !v.IsValid() || !v.CanSet() {
			return reflect.Value{}, fmt.Errorf("nodeutil: %s has no field %s", o.v.Type(), path)
		}
	}
	return v, nil
}

// optionField reads the field path of o as a T.
func optionField[T any](o clientOption, path string) (T, error) {
	var zero T
	v, err := o.field(path)
	if err != nil {
		return zero, err
	}
	if !v.Type().AssignableTo(reflect.TypeFor[T]()) {
		return zero, fmt.Errorf("nodeutil: %s.%s is a %s, not a %s", o.v.Type(), path, v.Type(), reflect.TypeFor[T]())
	}
	return v.Interface().(T), nil
}

// set sets the field path of o to x.
func (o clientOption) set(path string, x any) error {
	v, err := o.field(path)
	if err != nil {
		return err
	}
	xv := reflect.ValueOf(x)
	if !xv.Type().AssignableTo(v.Type()) {
		return fmt.Errorf("nodeutil: %s.%s is a %s, not a %s", o.v.Type(), path, v.Type(), xv.Type())
	}
	v.Set(xv)
	return nil
}

// clientSettings are the fields of a ClientOption that Open checks and
// uses.
type clientSettings struct {
	ClientOptions
	// dial is the client's own dial function: DialCtxFn, or DialFn, or
	// the library's default.
	dial dialFunc
	// creds returns the credentials a new connection authenticates with:
	// AuthCredentialsFn's, or Username and Password; nil when none.
	creds func(addr net.Addr) (user, password string, err error)
}

// readSettings reads the settings of o.
func readSettings(o clientOption) (s clientSettings, err error) {
	if s.InitAddress, err = optionField[[]string](o, "InitAddress"); err != nil {
		return s, err
	}
	if s.MasterSet, err = optionField[string](o, "Sentinel.MasterSet"); err != nil {
		return s, err
	}
	if s.ConnLifetime, err = optionField[time.Duration](o, "ConnLifetime"); err != nil {
		return s, err
	}
	if s.ToReplicas, err = optionField[bool](o, "ReplicaOnly"); err != nil {
		return s, err
	}
	toReplicas, err := o.field("SendToReplicas")
	if err != nil {
		return s, err
	}
	if toReplicas.Kind() == reflect.Func && !toReplicas.IsNil() {
		s.ToReplicas = true
	}
	if err := s.readDial(o); err != nil {
		return s, err
	}
	return s, s.readCreds(o)
}

// readDial reads the client's dial function.
func (s *clientSettings) readDial(o clientOption) error {
	dialCtx, err := optionField[dialFunc](o, "DialCtxFn")
	if err != nil {
		return err
	}
	dial, err := optionField[func(string, *net.Dialer, *tls.Config) (net.Conn, error)](o, "DialFn")
	if err != nil {
		return err
	}
	switch {
	case dialCtx != nil:
		s.dial = dialCtx
	case dial != nil:
		s.dial = func(_ context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
			return dial(dst, d, tc)
		}
	default:
		s.dial = defaultDial
	}
	return nil
}

// readCreds reads the client's credentials: AuthCredentialsFn, called as
// the library calls it (with the connection's remote address), or
// Username and Password.
func (s *clientSettings) readCreds(o clientOption) error {
	fn, err := o.field("AuthCredentialsFn")
	if err != nil {
		return err
	}
	if fn.Kind() == reflect.Func && !fn.IsNil() {
		s.creds, err = credentialsFunc(fn)
		return err
	}
	user, err := optionField[string](o, "Username")
	if err != nil {
		return err
	}
	password, err := optionField[string](o, "Password")
	if err != nil {
		return err
	}
	if user != "" || password != "" {
		s.creds = func(net.Addr) (string, string, error) { return user, password, nil }
	}
	return nil
}

// credentialsFunc calls fn, an AuthCredentialsFn: func(ctx) (creds,
// error), where ctx is a struct with an Address net.Addr, and creds one
// with a Username and a Password string.
func credentialsFunc(fn reflect.Value) (func(net.Addr) (string, string, error), error) {
	t := fn.Type()
	ok := t.NumIn() == 1 && t.NumOut() == 2 && t.In(0).Kind() == reflect.Struct && t.Out(0).Kind() == reflect.Struct &&
		t.Out(1) == reflect.TypeFor[error]()
	if ok {
		addr, a := t.In(0).FieldByName("Address")
		user, u := t.Out(0).FieldByName("Username")
		password, p := t.Out(0).FieldByName("Password")
		ok = a && u && p && addr.Type == reflect.TypeFor[net.Addr]() &&
			user.Type.Kind() == reflect.String && password.Type.Kind() == reflect.String
	}
	if !ok {
		return nil, fmt.Errorf("nodeutil: AuthCredentialsFn of an unknown type %s", t)
	}
	return func(addr net.Addr) (string, string, error) {
		in := reflect.New(t.In(0)).Elem()
		in.FieldByName("Address").Set(reflect.ValueOf(&addr).Elem())
		out := fn.Call([]reflect.Value{in})
		if err, _ := out[1].Interface().(error); err != nil {
			return "", "", err
		}
		return out[0].FieldByName("Username").String(), out[0].FieldByName("Password").String(), nil
	}, nil
}

// prepare sets in o what a Node's own client needs: no retries (the
// client is the Node's alone), its own copy of the addresses (the client
// may shuffle them), and dial as its dial function.
func (o clientOption) prepare(s clientSettings, dial dialFunc) error {
	if err := o.set("DisableRetry", true); err != nil {
		return err
	}
	if err := o.set("InitAddress", slices.Clone(s.InitAddress)); err != nil {
		return err
	}
	return o.set("DialCtxFn", dial)
}
