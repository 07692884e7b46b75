package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// Transports returns how the clients of a safe scenario reach the masters
// (workload.EnvConfig.Transport): the transport Options.Transport names
// for every client, or else the mix of workload.MixTransports (three
// clients of four pipelined, the fourth over another transport), turned by
// the scenario's place in All(), so that the suite's safe scenarios give
// each of the other transports to a third of them.
func (r *Run) Transports() func(client int) workload.Transport {
	if r.opts.Transport != "" {
		return workload.AllOver(r.opts.Transport)
	}
	return workload.MixTransports(max(0, slices.IndexFunc(All(), func(s Scenario) bool { return s.Name == r.sc.Name })))
}

// transportUse sums up, per transport the clients of e used, which
// clients used it and how many locks they acquired (c's intervals), in
// the order of workload.Transports.
func transportUse(e *workload.Env, c checker.Result) []TransportUse {
	acquired := make([]int, len(e.Clients()))
	for _, iv := range c.Intervals {
		if iv.Client >= 0 && iv.Client < len(acquired) {
			acquired[iv.Client]++
		}
	}
	var out []TransportUse
	for _, t := range workload.Transports {
		u := TransportUse{Transport: t}
		for i := range e.Clients() {
			if e.Transport(i) == t {
				u.Clients = append(u.Clients, i)
				u.Acquired += acquired[i]
			}
		}
		if len(u.Clients) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// clientsNote describes how each client of e reached the masters, e.g.
// "clients: 0 pooled, 1 goredis (ReadTimeout 300ms), ...".
func clientsNote(e *workload.Env) string {
	parts := make([]string, len(e.Clients()))
	for i := range parts {
		parts[i] = fmt.Sprintf("%d %s", i, e.TransportDetail(i))
	}
	return "clients: " + strings.Join(parts, ", ")
}
