// Package netfault puts a fault-injecting TCP proxy between every client of
// the chaos harness and every Redis node, so that a node can be slowed down
// or cut off for one client while the others still reach it.
//
// The proxies run in process on 127.0.0.1. A slow link delays every request
// by a latency (keeping the order of the bytes); a cut link holds the bytes
// in both directions, as a network partition does (the client sees
// timeouts, not refused connections), and delivers them in order when it is
// healed, as TCP does after a short partition. A delayed link (Delay)
// delivers the bytes of the connections open at that moment, in one
// direction, late: after the client gave up on them and reached the node
// again over a new connection, which is not delayed. Sent and Delivered
// tell when what a client sent has reached the node. A link whose node is
// down closes the client's connection, as a refused connection would.
//
// The first version used Shopify's toxiproxy as a library. Its timeout toxic,
// the one that stops traffic, cannot be removed cleanly: removing it closes
// the stub without rewiring the chain, so the next bytes on the connection
// block a goroutine forever (goleak caught it). It also drops the bytes of a
// live connection, which no network does and which desynchronises a
// pipelined client. This small proxy does the two faults the harness needs
// without either problem.
package netfault
