// Package guard keeps a chaos run alive through the library it tests: it
// turns a panic of a function the harness calls (a scenario's body, a
// client's loop, the fault injector) into an error that carries the panic's
// value and stack, so that the scenario it belongs to fails and the others
// still run, and it takes the goroutine dump a watchdog puts in the report
// of a scenario that hangs.
//
// A panic on a goroutine the harness did not start (one of the library's
// own) cannot be recovered by anyone but that goroutine: it ends the
// process. The chaos command can run each scenario in a process of its own
// (cmd/chaos --isolate) for that case.
package guard
