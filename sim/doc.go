// Package sim is a deterministic simulator for the quorumlock library: it
// runs the real redlock package (every lock kind, renewal, Extend, Resume,
// Do, the restart guard, fencing, durable grants, release retries) against
// simulated masters (package master: the library's real Lua scripts on an
// in-memory keyspace) over a simulated network (package world), inside
// testing/synctest bubbles, so that virtual time costs only the events it
// holds. A schedule (package schedule), drawn from a seed, says what the
// clients do and which faults strike when; every run's history goes
// through the chaos suite's checkers (chaos/checker, chaos/linearize). A
// failing schedule replays from its seed, and shrinks to a short one that
// still fails.
package sim
