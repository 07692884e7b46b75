// Command bench runs the quorumlock benchmark harness: quorumlock, redsync,
// redislock and the raw limit against the same redis-server masters (it
// starts and stops them itself), for N = 1, 3 and 5.
//
// Usage:
//
//	cd bench && go run ./cmd/bench [flags]
//
// It prints the tables, with quorumlock's ratios and the targets, to
// standard output (JSON instead with -json), writes an SVG plot of latency
// against N (-svg), and logs its progress to standard error. At the default
// durations a run takes about eight minutes on two CPUs; -short runs every
// scenario in seconds, with numbers that mean little.
//
// Flags:
//
//	-json            write the report as JSON instead of tables
//	-svg file        write the latency plot there ("" for none; default latency.svg)
//	-short           tiny durations, for a smoke test
//	-nodes 1,3,5     the N to measure
//	-impls list      the implementations to run (default all)
//	-rounds n        turns per implementation in each measurement
//	-latency-rounds n  turns per implementation in the latency scenario
//	-latency, -throughput, -contention, -degraded, -hang durations
//	-from file.json  render a report saved with -json instead of running
//	-durability      measure only what durable grants cost (-server names the masters' binary)
//	-election        measure only leader election (redlock.Election): leader
//	                 change and observer notification, p50 and p99, for each
//	                 -nodes; -changes per N (default 300), -rounds (default 10),
//	                 -short, -json; about 25 seconds
//	-q               no progress log
package main
