package nodeutil_test

import (
	"errors"
	"testing"

	"github.com/quorumlock/quorumlock/nodeutil"
)

type word string

type argument struct{ v any }

func (a argument) RedisArg() any { return a.v }

type stringer struct{}

func (stringer) String() string { return "Reply" }

// The check judges the text that goes on the wire, whatever the Go type.
func TestCheckShared(t *testing.T) {
	for _, c := range []struct {
		cmd       string
		args      []any
		pipelined bool
		want      error
	}{
		{"multi", nil, false, nodeutil.ErrConnState},
		{"CLIENT", []any{"reply", "off"}, false, nodeutil.ErrConnState},
		{"CLIENT", []any{word("REPLY"), "SKIP"}, false, nodeutil.ErrConnState},
		{"CLIENT", []any{argument{"tracking"}, "on"}, false, nodeutil.ErrConnState},
		{"CLIENT", []any{argument{argument{"x"}}}, false, nil}, // RedisArg is asked once, as redigo does
		{"CLIENT", []any{stringer{}, "SKIP"}, false, nodeutil.ErrConnState},
		{"CLIENT", []any{[]byte("caching"), "yes"}, false, nodeutil.ErrConnState},
		{"CLIENT", []any{"SETNAME", "x"}, false, nil},
		{"BLPOP", []any{"l", 1}, true, nodeutil.ErrBlocking},
		{"BLPOP", []any{"l", 1}, false, nil},
		{"XREAD", []any{word("block"), 10, "STREAMS", "s", "$"}, true, nodeutil.ErrBlocking},
		{"XREAD", []any{"STREAMS", "s", "0"}, true, nil},
		{"GET", []any{"MULTI"}, false, nil},
	} {
		err := nodeutil.CheckShared(c.cmd, c.args, c.pipelined)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s %v (pipelined %v): %v, want %v", c.cmd, c.args, c.pipelined, err, c.want)
		}
	}
}

func TestWireText(t *testing.T) {
	for _, c := range []struct {
		arg  any
		want string
	}{
		{"s", "s"}, {[]byte("b"), "b"}, {42, "42"}, {int64(-7), "-7"}, {1.5, "1.5"},
		{true, "1"}, {false, "0"}, {nil, ""}, {word("w"), "w"}, {argument{3}, "3"}, {stringer{}, "Reply"},
	} {
		if got := nodeutil.WireText(c.arg); got != c.want {
			t.Errorf("WireText(%#v) = %q, want %q", c.arg, got, c.want)
		}
	}
}
