package cluster

import "sync"

// passwords maps the address of every node of a live cluster started with
// a password to that password, so that the harness's own commands on a node
// (do, and through it Keys, Get, ClockJump, awaitPing), which take an
// address, authenticate without every caller passing the password along.
// Addresses are free loopback ports, unique among live clusters; Close
// removes them.
var passwords sync.Map // string -> string

// setPassword records the password of the node at addr; "" forgets it.
func setPassword(addr, password string) {
	if password == "" {
		passwords.Delete(addr)
		return
	}
	passwords.Store(addr, password)
}

// passwordFor returns the password of the node at addr, "" for none.
func passwordFor(addr string) string {
	if pw, ok := passwords.Load(addr); ok {
		return pw.(string)
	}
	return ""
}
