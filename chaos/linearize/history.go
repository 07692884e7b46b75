package linearize

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// keyHistory is one key's history as porcupine operations.
type keyHistory struct {
	key   string
	ops   []porcupine.Operation
	holds int // holds of non-zero length
}

// pending is a porcupine operation before its client is numbered and its
// open return (if any) is known.
type pending struct {
	in         input
	client     int
	call, ret  time.Duration
	openReturn bool
}

// build turns ops into one history per key, ordered by key, and counts the
// releases that end no granted acquisition. See the package documentation
// for the mapping.
func build(ops []Op, windows bool) ([]keyHistory, int, error) {
	granted := map[int64]int{} // lock id -> index of its granted Acquire
	first := map[int64]int{}   // lock id -> index of its first Release
	for i, o := range ops {
		if err := validate(o); err != nil {
			return nil, 0, err
		}
		if o.Kind != Acquire || o.Outcome != Ok {
			continue
		}
		if o.Lock == 0 {
			return nil, 0, fmt.Errorf("linearize: granted acquire without a lock id: %v", o)
		}
		if _, dup := granted[o.Lock]; dup {
			return nil, 0, fmt.Errorf("linearize: lock %d granted twice", o.Lock)
		}
		granted[o.Lock] = i
	}
	for i, o := range ops {
		if o.Kind != Release {
			continue
		}
		if j, ok := first[o.Lock]; !ok || o.Call < ops[j].Call {
			first[o.Lock] = i
		}
	}

	byKey := map[string][]pending{}
	unmatched := 0
	add := func(key string, p pending) { byKey[key] = append(byKey[key], p) }
	noopOf := func(o Op) pending {
		p := pending{in: input{step: noop, op: o}, client: o.Client, call: o.Call, ret: o.Call}
		if windows {
			p.ret, p.openReturn = max(o.Call, o.Return), o.Outcome == Unknown
		}
		return p
	}
	consumed := map[int]bool{} // releases that end a hold
	for _, o := range ops {
		if o.Kind != Acquire || o.Outcome != Ok {
			continue
		}
		h := hold{lock: o.Lock, client: o.Client, mode: o.Mode, owner: o.Owner}
		endAt, rel := o.Until, -1
		if j, ok := first[o.Lock]; ok && ops[j].Call <= o.Until {
			endAt, rel = ops[j].Call, j
		}
		if endAt <= o.Return { // a hold of zero length holds nothing
			add(o.Key, noopOf(o))
			continue
		}
		begins := pending{in: input{step: begin, hold: h, op: o}, client: o.Client, call: o.Return, ret: o.Return}
		if windows {
			begins.call = min(o.Call, o.Return)
		}
		add(o.Key, begins)
		if rel < 0 {
			add(o.Key, pending{in: input{step: end, hold: h, expiry: true, op: o}, client: o.Client, call: o.Until, ret: o.Until})
			continue
		}
		consumed[rel] = true
		r := ops[rel]
		ends := pending{in: input{step: end, hold: h, op: r}, client: r.Client, call: r.Call, ret: r.Call}
		if windows {
			ends.ret, ends.openReturn = max(r.Call, r.Return), r.Outcome == Unknown
		}
		add(o.Key, ends)
	}
	for i, o := range ops {
		switch {
		case o.Kind == Acquire && o.Outcome != Ok:
			add(o.Key, noopOf(o))
		case o.Kind == Release && !consumed[i]:
			// A release that ends no hold: a later one, one after the
			// validity ran out, or one of an acquisition never granted.
			if g, ok := granted[o.Lock]; ok {
				add(ops[g].Key, noopOf(o))
				continue
			}
			unmatched++
			if o.Key != "" {
				add(o.Key, noopOf(o))
			}
		}
	}

	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	hs := make([]keyHistory, len(keys))
	for i, k := range keys {
		hs[i] = toOperations(k, byKey[k])
	}
	return hs, unmatched, nil
}

// toOperations numbers one key's clients from 0 (for visualizations), gives
// open returns the key's last time, and makes porcupine operations.
func toOperations(key string, ps []pending) keyHistory {
	var last time.Duration
	clients := map[int]int{}
	var ids []int
	for _, p := range ps {
		last = max(last, p.call, p.ret)
		if _, ok := clients[p.client]; !ok {
			clients[p.client] = 0
			ids = append(ids, p.client)
		}
	}
	slices.Sort(ids)
	for i, c := range ids {
		clients[c] = i
	}
	kh := keyHistory{key: key, ops: make([]porcupine.Operation, len(ps))}
	for i, p := range ps {
		ret := p.ret
		if p.openReturn {
			ret = last
		}
		if p.in.step == begin {
			kh.holds++
		}
		kh.ops[i] = porcupine.Operation{ClientId: clients[p.client], Input: p.in, Call: int64(p.call), Return: int64(ret)}
	}
	return kh
}

func validate(o Op) error {
	switch {
	case o.Kind != Acquire && o.Kind != Release:
		return fmt.Errorf("linearize: invalid kind in %v", o)
	case o.Outcome != Ok && o.Outcome != Refused && o.Outcome != Unknown:
		return fmt.Errorf("linearize: invalid outcome in %v", o)
	case o.Mode != Exclusive && o.Mode != Shared:
		return fmt.Errorf("linearize: invalid mode in %v", o)
	}
	return nil
}
