//go:build race

package nodeutil_test

const raceEnabled = true
