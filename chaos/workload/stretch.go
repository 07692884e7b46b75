package workload

import (
	"math/rand/v2"
	"time"

	"github.com/quorumlock/quorumlock/internal/interleave"
)

// The clients' library runs with its interleaving points stretched (see
// interleave): at each, now and then, the goroutine there sleeps, as one
// descheduled at that moment on a loaded machine would. The points are
// where the library's correctness rests on the order in which its own
// goroutines act, and where a bug shows only in such a moment: a caller
// that wrote its own command to a pipelined connection and is about to
// write what others queued meanwhile, while its reply comes back and
// its request is recycled for another caller's command.

// stretchChance is the share of the passes through a point that sleep.
const stretchChance = 0.5

// stretchMax bounds one sleep: past a reply's round trip through the
// proxies, under the node timeout.
const stretchMax = 2 * time.Millisecond

// stretch sleeps now and then, up to stretchMax.
func stretch() {
	if rand.Float64() < stretchChance {
		time.Sleep(rand.N(stretchMax))
	}
}

// stretchPoints makes every interleaving point of the library stretch. The
// points are process-wide: every Env of the process stretches them.
func stretchPoints() { interleave.SetAfterOwnWrite(stretch) }
