// Package workload runs the clients of a chaos run against a cluster: each
// client has its own redlock.Locker over its own proxies to the nodes, and
// every lock it is granted, every write it makes to the fenced resource and
// every release it begins is recorded on the run's one monotonic timeline.
//
// An Env ties a cluster, the proxies, the clients, the history, the fenced
// resources and the fault injector together. Clients can be driven step by
// step (Client.Acquire, Held.Write, Held.Release) by scripted scenarios, or
// all at once by Run, in a loop of Lock, write, Unlock, optionally with
// holders that pause past their TTL before they write.
//
// A client reaches the masters through a Transport: the pipelined or the
// Pooled pool.Node, or the go-redis or rueidis adapter (EnvConfig.Transport,
// MixTransports). EndAtRandom gives a call a context that ends at a random
// point of it; Run gives each cycle of a client one now and then.
//
// Election (election.go) runs a leader election (redlock.Election) over
// the clients instead: each a candidate and an observer, under a random
// fault schedule (Election.Run), then in a quiet phase of handovers
// (Election.Failover); its ElectionHistory goes to checker.CheckElection.
//
// Fencing tokens: the clients lock with redlock.Config.Fencing and give the
// resource lk.Fence() (see Env.fence). Only the fenced resource uses tokens;
// overlaps are found from the lock intervals alone.
package workload
