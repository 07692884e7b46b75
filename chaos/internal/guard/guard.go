package guard

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// PanicError is a recovered panic: the value given to panic and the stack
// of the goroutine that panicked, taken where it panicked.
type PanicError struct {
	Value any
	Stack []byte
}

// Error returns "guard: panic: " and the panic's value.
func (p *PanicError) Error() string { return fmt.Sprintf("guard: panic: %v", p.Value) }

// Unwrap returns the panic's value when it is an error (panic(err)), so that
// errors.Is and errors.As see it.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Call calls fn and returns its error, or a *PanicError if fn panicked.
// runtime.Goexit (t.FailNow from a test's goroutine) is not a panic and is
// not stopped.
func Call(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
}

// Go returns fn made safe to run on a goroutine of its own under an
// errgroup or alike: the function it returns calls fn through Call.
func Go(fn func() error) func() error {
	return func() error { return Call(fn) }
}

// maxDump bounds a goroutine dump: a run with thousands of goroutines
// stuck in the library would otherwise put megabytes into a report.
const maxDump = 8 << 20

// Dump returns the stacks of every goroutine of the process, as a panic
// that nobody recovers prints them, truncated at 8 MiB.
func Dump() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= maxDump {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
