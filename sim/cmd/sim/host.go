package main

import (
	"os"
	"testing"
)

// host runs f with a *testing.T, which testing/synctest needs for its
// bubbles, in this (non-test) binary: testing.Main runs it as the one test
// of the process. It returns f's exit status: 0, or 1 when f failed the T.
// os.Args are replaced for testing's flag parsing.
func host(f func(t *testing.T)) {
	args := os.Args
	os.Args = []string{args[0], "-test.run=^Sim$", "-test.timeout=0"}
	testing.Main(func(pat, str string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "Sim", F: f}}, nil, nil)
}

// testingT is the T the simulator's bubbles run under.
type testingT = *testing.T
