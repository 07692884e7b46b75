package redlock

import "time"

// Exported for tests of pure logic.
var FullJitter = fullJitter

func (b ExponentialBackoff) Ceiling(attempt int) time.Duration { return b.ceiling(attempt) }

var FenceKey = fenceKey

// Waiting is the number of this Locker's Lock calls queued for key.
func (l *Locker) Waiting(key string) int {
	l.queues.mu.Lock()
	defer l.queues.mu.Unlock()
	if q := l.queues.keys[key]; q != nil {
		return len(q.waiters)
	}
	return 0
}

var RWKeys = rwKeys

var CheckDerivable = checkDerivable

var PermitKey = permitKey
