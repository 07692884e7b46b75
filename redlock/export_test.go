package redlock

import "time"

// Exported for tests of pure logic.
var FullJitter = fullJitter

func (b ExponentialBackoff) Ceiling(attempt int) time.Duration { return b.ceiling(attempt) }

var FenceKey = fenceKey
