package bench_test

import (
	"context"
	"log"
	"os"

	"github.com/quorumlock/quorumlock/bench"
)

// Run the harness at tiny durations for quorumlock and redsync only, and
// print the tables with quorumlock's ratios and the targets.
func ExampleRun() {
	opts := bench.ShortOptions()
	opts.Impls = []string{bench.Ours, bench.Redsync}
	r, err := bench.Run(context.Background(), opts)
	if err != nil {
		log.Fatal(err)
	}
	if err := r.WriteTable(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
