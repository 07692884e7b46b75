// Package chaos is the root of quorumlock's fault harness. It holds no code;
// the harness lives in its sub-packages, layered like etcd's robustness tests:
//
//   - cluster: N independent Redis masters behind one interface, as local
//     redis-server processes, dockertest containers or a docker compose
//     project, each of which can be killed, started, restarted (with or
//     without AOF, after a delay), paused, resumed and given a clock jump;
//   - netfault: an in-process fault-injecting TCP proxy per (client, node),
//     to slow a node down or cut it off for one client;
//   - fault: fault schedules, random from a seed or scripted, and the
//     injector that applies them on one monotonic timeline;
//   - checker: the safety checker (lock intervals, overlaps per key) and the
//     fenced resource that rejects stale writers;
//   - workload: clients running Lock, write, Unlock against the cluster;
//   - scenario: the scenarios, each with the invariant it checks and its
//     expected outcome;
//   - report: the text, JSON and SVG reports;
//   - cmd/chaos: the command that runs the suite.
//
// See README.md in this directory for the scenarios and how to run them.
package chaos
