package pool

import (
	"fmt"
	"testing"
)

// wire sends a script as EVAL, with its source in place of the digest,
// the first time on a connection and as EVALSHA after that; commands
// without a source pass unchanged, and the request itself never changes.
func TestScriptsSentWire(t *testing.T) {
	skipWithoutEvalFirst(t)
	var s scriptsSent
	r := &request{cmd: "EVALSHA", src: "return 1", args: []any{"digest", 1, "k"}}
	cmd, args := s.wire(r)
	if cmd != "EVAL" || fmt.Sprint(args) != "[return 1 1 k]" {
		t.Errorf("first call: %s %v, want EVAL with the source", cmd, args)
	}
	if r.cmd != "EVALSHA" || r.args[0] != "digest" {
		t.Errorf("the request changed: %s %v", r.cmd, r.args)
	}
	if cmd, args := s.wire(r); cmd != "EVALSHA" || args[0] != "digest" {
		t.Errorf("second call: %s %v, want EVALSHA with the digest", cmd, args)
	}
	plain := &request{cmd: "SET", args: []any{"k", "v"}}
	if cmd, args := s.wire(plain); cmd != "SET" || len(args) != 2 {
		t.Errorf("SET went as %s %v", cmd, args)
	}
}

// A connection that sees ever new scripts keeps at most maxScriptsSent
// of them, and still sends each script as EVAL before it uses EVALSHA.
func TestScriptsSentBounded(t *testing.T) {
	skipWithoutEvalFirst(t)
	var s scriptsSent
	call := func(i int) string {
		cmd, _ := s.wire(&request{cmd: "EVALSHA", src: "src", args: []any{fmt.Sprint(i), 0}})
		return cmd
	}
	for i := range 3 * maxScriptsSent {
		if cmd := call(i); cmd != "EVAL" {
			t.Fatalf("script %d first went as %s", i, cmd)
		}
		if cmd := call(i); cmd != "EVALSHA" {
			t.Fatalf("script %d then went as %s", i, cmd)
		}
		if len(s) > maxScriptsSent {
			t.Fatalf("%d scripts kept, want at most %d", len(s), maxScriptsSent)
		}
	}
}

func skipWithoutEvalFirst(t *testing.T) {
	if !layers.evalFirst {
		t.Skip("the first call of a script goes as EVALSHA: the layer is off (layersOff)")
	}
}
