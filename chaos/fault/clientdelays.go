package fault

import (
	"math/rand/v2"
	"time"
)

// ClientDelays draws, from seed, delays of every link of one client at
// once: now and then (every 0.5 to 1.5s) a client's connections to every
// node carry their requests, or their replies, DefaultDelay late (drawn
// in [DefaultDelay/2, 3DefaultDelay/2]), for 100 to 300ms (then Heal;
// what was delayed keeps its time). A delay on a minority of the nodes
// (Random) leaves a late command on a minority at worst; on every node at
// once, a call's commands reach a quorum after the call gave up, closed
// its connections and sent what follows over new ones: the case where a
// release overtakes the acquire it undoes. The schedule ends its faults
// before d.
func ClientDelays(seed uint64, clients, nodes int, d time.Duration) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0xde1a75))
	var s Schedule
	for t := 300 * time.Millisecond; ; t += time.Duration(500+rng.IntN(1000)) * time.Millisecond {
		hold := time.Duration(100+rng.IntN(200)) * time.Millisecond
		if t+hold >= d || clients <= 0 {
			break
		}
		c := rng.IntN(clients)
		kind := DelayRequests
		if rng.IntN(2) == 0 {
			kind = DelayReplies
		}
		late := DefaultDelay/2 + time.Duration(rng.Int64N(int64(DefaultDelay)+1))
		for j := range nodes {
			s = append(s, Fault{At: t, Kind: kind, Node: j, Clients: []int{c}, Arg: late})
		}
		for j := range nodes {
			s = append(s, Fault{At: t + hold, Kind: Heal, Node: j, Clients: []int{c}})
		}
	}
	return s
}
