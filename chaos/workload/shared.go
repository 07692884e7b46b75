package workload

import (
	"sync"
	"time"
)

// shared is the state that the clients of one Env share: client 0 makes
// it, and every later client takes client 0's (newClient).
type shared struct {
	mu      sync.Mutex
	gates   map[string]*sync.Mutex // per fair key: one waiter starts at a time (registration.go)
	crashes map[string]time.Time   // per fair key: the last crash of a waiter (crash.go)
}

func newShared() *shared {
	return &shared{gates: map[string]*sync.Mutex{}, crashes: map[string]time.Time{}}
}

// gate returns the mutex that orders the starts of key's fair waiters.
func (s *shared) gate(key string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[key]
	if g == nil {
		g = &sync.Mutex{}
		s.gates[key] = g
	}
	return g
}

// mayCrash reports whether a waiter of key may crash now: no other one
// crashed within apart. When it may, the crash is noted as of now.
func (s *shared) mayCrash(key string, apart time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if last, ok := s.crashes[key]; ok && now.Sub(last) < apart {
		return false
	}
	s.crashes[key] = now
	return true
}
