// Package report presents the results of the chaos suite: a text report
// that says what kind of run it was (a short run is a smoke test), with one
// summary row per scenario (the expected outcome beside the verdict) and
// one detail block per scenario; the same as JSON; the goroutine dumps of
// the scenarios that hung or panicked; and an SVG timeline per scenario
// that shows, on one time axis, the faults on each master and each client,
// and every lock each client held, with the overlaps in red.
package report
