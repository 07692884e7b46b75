// Package report presents the results of the chaos suite: a text report
// with one summary row and one detail block per scenario, the same as JSON,
// and an SVG timeline per scenario that shows, on one time axis, the faults
// on each master and each client, and every lock each client held, with the
// overlaps in red.
package report
