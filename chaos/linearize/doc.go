// Package linearize is the chaos harness's second, independent safety
// checker: it runs the recorded history of each key through porcupine
// (github.com/anishathalye/porcupine) with a sequential model of a lock, and
// must agree with package checker on every history.
//
// # The model
//
// The model is a lock as its holders know it. Its state, per key, is the set
// of holds whose holders know they hold the key. A hold begins if it is
// compatible with every hold in the set and ends when its holder releases it
// or its validity runs out. Two holds are compatible when both are Shared
// (read-write readers) or both have the same non-empty Owner (the nested
// holds of one reentrant owner are one ownership); any other pair excludes
// each other: plain and fenced locks and read-write writers are Exclusive
// with no Owner.
//
// # The mapping
//
// The checker reasons about the time in which a client believed it held a
// key: a granted acquisition holds [granted, min(Until, release began)), a
// half-open interval, and one of zero length holds nothing. Linearizability
// is about the order of operations, so each change in a holder's belief is
// an operation:
//
//   - a granted Acquire becomes "hold begins", at its Return (the belief
//     starts when the grant is received);
//   - its first Release, if that began no later than Until, becomes "hold
//     ends", at the release's Call (the holder stops acting then, whatever
//     the release's outcome);
//   - otherwise "hold ends (expires)" at Until: a lease expiry ends the
//     belief without any release;
//   - refused and possibly applied (Unknown) acquires, acquisitions whose
//     hold has zero length, and releases that end no hold are operations
//     that the model accepts anywhere and that change nothing: a possibly
//     applied acquire may have taken the key on the masters, but its caller
//     does not know that it holds and does not act, so no belief begins.
//
// Porcupine's windows are closed: operations at one instant may be ordered
// either way, which matches the half-open intervals (a hold that ends at t
// and one that begins at t do not overlap).
//
// With Options.CallWindows, "hold begins" gets the acquire's whole window
// [Call, Return], "hold ends" the release's [Call, Return], and an Unknown
// outcome an open window (to the key's last time). The verdict is the same:
// an order that begins each hold at its Return and ends it at the release's
// Call keeps every hold as short as the windows allow, so it is accepted if
// any order is; and if two incompatible holds overlap, each begins (returns)
// before the other ends (is called), so both are in the set at once in every
// order.
//
// Hence a key's history is linearizable exactly when no two incompatible
// holds of non-zero length overlap, which is what the checker computes by a
// sweep over intervals; here porcupine searches the orders of operations
// against a state machine instead. The tests compare the two on random
// histories.
//
// # Bounds
//
// Each key's history is cut into segments where every order must have
// linearized all that came before and left the key free (see segments), and
// porcupine checks the segments one by one, so that a soak's long history
// costs about as much as its parts. Check bounds the whole search by
// Options.Timeout; a key it did not decide in time is TimedOut, never a hang
// and never a pass. Options.Visualize writes porcupine's HTML visualization
// of the segment that decided the first key that was not linearizable.
package linearize
