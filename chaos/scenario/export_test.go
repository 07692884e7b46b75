package scenario

import "context"

// NewScenario returns a scenario whose body is run, for the tests of the
// runner itself.
func NewScenario(name string, unsafe bool, run func(ctx context.Context, r *Run) error) Scenario {
	return Scenario{Name: name, Invariant: "the runner's own test", Expect: "whatever the test says", Unsafe: unsafe, run: run}
}

// RestartHistory is how many times restart-delayed's A locks the key first.
const RestartHistory = restartHistory
