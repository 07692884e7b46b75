package clock_test

import (
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/clock"
)

// The drift allowance for a 10-second lock with the default factor of 1%.
func ExampleDrift() {
	fmt.Println(clock.Drift(10*time.Second, 0.01))
	// Output: 102ms
}

// A client clock that runs 10% fast: what the chaos harness uses to show a
// lock believed valid for longer than it really is.
func ExampleNewSkewed() {
	fast := clock.NewSkewed(clock.Real, 1.1)
	start := fast.Now()
	fast.Jump(time.Minute)
	fmt.Println(fast.Now().Sub(start) >= time.Minute)
	// Output: true
}
