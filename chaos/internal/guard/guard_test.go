package guard_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/quorumlock/quorumlock/chaos/internal/guard"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// panicky panics with v; its name must appear in the recovered stack.
func panicky(v any) error { panic(v) }

func TestCallRecoversAPanic(t *testing.T) {
	err := guard.Call(func() error { return panicky("boom") })
	var p *guard.PanicError
	if !errors.As(err, &p) {
		t.Fatalf("Call = %v, want a *PanicError", err)
	}
	if p.Value != "boom" || !strings.Contains(err.Error(), "guard: panic: boom") {
		t.Errorf("value %v, error %q", p.Value, err)
	}
	if !bytes.Contains(p.Stack, []byte("guard_test.panicky")) {
		t.Errorf("the stack does not name the function that panicked:\n%s", p.Stack)
	}
}

func TestCallKeepsAnErrorsIdentity(t *testing.T) {
	if err := guard.Call(func() error { return io.EOF }); err != io.EOF {
		t.Errorf("Call = %v, want io.EOF itself", err)
	}
	if err := guard.Call(func() error { return nil }); err != nil {
		t.Errorf("Call = %v, want nil", err)
	}
	// panic(err) still matches err.
	if err := guard.Call(func() error { return panicky(io.ErrUnexpectedEOF) }); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Call = %v, want it to match the error it panicked with", err)
	}
}

func TestGoUnderAnErrgroup(t *testing.T) {
	var g errgroup.Group
	g.Go(guard.Go(func() error { return panicky(42) }))
	g.Go(guard.Go(func() error { return nil }))
	var p *guard.PanicError
	if err := g.Wait(); !errors.As(err, &p) || p.Value != 42 {
		t.Errorf("Wait = %v, want the panic of the first goroutine", err)
	}
}

func TestDumpHasEveryGoroutine(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		parkedHere(stop)
	}()
	defer func() { close(stop); <-done }()
	// The goroutine may not have reached the channel yet: wait for it in
	// the dump itself.
	for !bytes.Contains(guard.Dump(), []byte("guard_test.parkedHere")) {
		runtime.Gosched()
	}
	if d := guard.Dump(); !bytes.Contains(d, []byte("guard_test.TestDumpHasEveryGoroutine")) {
		t.Errorf("the dump lacks the calling goroutine:\n%s", d)
	}
}

func parkedHere(stop <-chan struct{}) { <-stop }
