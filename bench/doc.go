// Package bench measures quorumlock against its peers on the same
// redis-server masters in one run: github.com/go-redsync/redsync/v4 over its
// redigo adapter (and, on a faulty node, with fail-fast and without read
// timeouts), github.com/bsm/redislock (one node only), and the "raw limit",
// the bare redigo commands of one lock cycle fanned out to every node, which
// is the cost floor. quorumlock runs at its defaults and with pooled
// connections; "pipelined" is a prototype of coalesced writes over one
// connection per node, the floor of that design (see Impls).
//
// Every implementation is driven through one small interface, Mutex (Lock
// and Unlock on one key), and the scenarios are the same code for all:
//
//   - (a) uncontended lock+unlock latency from one goroutine, p50 to p99.9
//     from an HDR histogram;
//   - (b) throughput with 16, 64 and 256 goroutines on distinct keys, and
//     with 64 goroutines sharing 16 keys; allocations per cycle and the
//     goroutines the library runs beside the callers;
//   - (c) contention: 8 clients on one key, each holding it 1ms:
//     acquisitions per second, wait time, fairness, spurious failures;
//   - (d) degraded: one node frozen with SIGSTOP, or killed: latency,
//     hangs, the goroutines and connections left at the end, and whether
//     the caller can see the faulty node;
//   - (e) allocations and bytes per lock+unlock cycle, and the goroutines
//     the library runs beside the caller's;
//
// each for N = 1, 3 and 5 masters. Implementations take turns in rotating
// order (Options.Rounds, and more, shorter turns for the latency:
// Options.LatencyRounds) so that a noisy machine does not favour one; the
// report records the CPU steal of the run and of each latency row, the
// time the hypervisor gave to other guests.
// A turn that overruns its duration by Options.HangAfter is reported as
// hung, its fault is lifted so the stuck calls return, and the run goes on.
// Its calls' context ends halfway there, so a Lock that retries until its
// context ends and then returns counts as an error, not as a hang.
//
// Durability measures apart what durable grants cost (quorumlock with and
// without redlock.Durability{Local: true} on masters with appendfsync
// always and everysec; PrintDurability writes its table), and Election
// what a leader election costs (redlock.Election at each N: a leader
// change, Resign to the next Campaign returning, and an observer's
// notification of a new term or value; PrintElection writes its table).
//
// Run returns a Report, which writes itself as text tables with
// quorumlock's ratios against every other row (WriteTable), as JSON
// (WriteJSON) and as an SVG plot of latency against N (WriteSVG), and
// which measures itself against the targets of the benchmark issue.
// The command github.com/quorumlock/quorumlock/bench/cmd/bench runs it;
// the package's Go benchmarks (BenchmarkLockUnlock/nodes=N/impl=X and
// others) feed benchstat.
package bench
