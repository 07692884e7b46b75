// Package scenario holds the scenarios of the chaos harness: each starts a
// cluster of five independent masters, runs clients against it while faults
// are injected, and checks the outcome it expects, from "mutual exclusion
// holds while a minority fails" to the known ways Redlock breaks (a restart
// without persistence, a server clock jump) and what fencing tokens catch (a
// holder paused past its TTL), and, for each protection of the library
// against those ways (the restart guard, durable grants, the replica wait
// behind Sentinel), a scenario that shows the overlap without it and its
// twin that shows none with it (twins.go).
//
// All returns the scenarios; Scenario.Run runs one on a backend and returns
// a Result with its counts, its checks and its verdict (Pass when every
// check held, that is when the expected outcome, safe or unsafe, was
// observed: for a safe scenario 0 overlaps and 0 violations of any
// invariant). Every random choice comes from Options.Seed, reported in the
// Result: the same seed replays the same fault schedule.
//
// The runner survives the library it tests: a scenario that hangs past its
// watchdog (Options.Watchdog) or panics fails, with the goroutines' stacks
// in its Result, and Run returns (see watchdog.go).
package scenario
