package workload

import (
	"maps"
	"testing"

	"github.com/quorumlock/quorumlock/sim/master"
)

// TestItemIDsAsDescribed: itemIDs reads the same ids from an item as
// partIDs reads from describe's lines of it, but a hold's "1".
func TestItemIDsAsDescribed(t *testing.T) {
	items := []master.Item{
		{Key: "k", Type: "string", Str: "TOKEN1"},
		{Key: "{k}:tomb:TOKEN1", Type: "string", Str: "1"},
		{Key: "{k}:fence", Type: "string", Str: "42"},
		{Key: "{k}:fair:ticket", Type: "string", Str: "7"},
		{Key: "k", Type: "hash", Hash: map[string]string{"h:HOLD1": "1", "h:HOLD2": "1", "owner": "OWNER1"}},
		{Key: "{k}:rw", Type: "hash", Hash: map[string]string{"mode": "write", "writer": "TOKEN2"}},
		{Key: "{k}:w", Type: "zset", Zset: []master.ZMember{{Member: "TOKEN3", Score: 5}, {Member: "TOKEN4", Score: 9}}},
		{Key: "{k}:fair:ticket", Type: "zset", Zset: []master.ZMember{{Member: "TOKEN5"}}},
	}
	for _, it := range items {
		want := map[string]bool{}
		for _, p := range describe(it) {
			for _, id := range partIDs(p) {
				if id != "1" {
					want[id] = true
				}
			}
		}
		got := map[string]bool{}
		itemIDs(got, it)
		if !maps.Equal(got, want) {
			t.Errorf("%s (%s): itemIDs %v, describe and partIDs %v", it.Key, it.Type, got, want)
		}
	}
}
