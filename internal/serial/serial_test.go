package serial_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/quorumlock/quorumlock/internal/serial"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Functions run in the order they were queued, never two at once, and the
// queue's goroutine exits once it is empty (TestMain checks).
func TestQueueRunsInOrderOneAtATime(t *testing.T) {
	var q serial.Queue
	var (
		mu      sync.Mutex
		got     []int
		running bool
		overlap bool
		wg      sync.WaitGroup
	)
	const n = 100
	wg.Add(n)
	for i := range n {
		q.Go(func() {
			defer wg.Done()
			mu.Lock()
			overlap = overlap || running
			running = true
			got = append(got, i)
			mu.Unlock()
			mu.Lock()
			running = false
			mu.Unlock()
		})
	}
	wg.Wait()
	if overlap {
		t.Fatal("two queued functions ran at once")
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ran in the order %v, want the order queued", got)
	}
}
