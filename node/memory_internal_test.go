package node

import (
	"testing"

	"github.com/minca-go/minca/store"
)

// A node's store keeps the node's Pebble memory where the caller leaves a
// part zero, and the caller's where it sets one (docs/stores.md, Memory of
// a node).
func TestStoreMemoryDefaults(t *testing.T) {
	cases := []struct {
		name string
		so   *store.Options
		want store.Memory
	}{
		{"no StoreOptions", nil, store.Memory{BlockCache: DefaultBlockCache, MemTable: DefaultMemTable}},
		{"zero Memory", &store.Options{}, store.Memory{BlockCache: DefaultBlockCache, MemTable: DefaultMemTable}},
		{"block cache set", &store.Options{Memory: store.Memory{BlockCache: 64 << 20}}, store.Memory{BlockCache: 64 << 20, MemTable: DefaultMemTable}},
		{"memtable and held set", &store.Options{Memory: store.Memory{MemTable: 1 << 20, Held: 5}}, store.Memory{BlockCache: DefaultBlockCache, MemTable: 1 << 20, Held: 5}},
	}
	for _, c := range cases {
		n := &Node{o: Options{StoreOptions: c.so}}
		if got := n.storeOptions(nil).Memory; got != c.want {
			t.Errorf("%s: the store's memory %+v, want %+v", c.name, got, c.want)
		}
	}
	so := &store.Options{}
	(&Node{o: Options{StoreOptions: so}}).storeOptions(nil)
	if so.Memory != (store.Memory{}) {
		t.Errorf("storeOptions changed the caller's options: %+v", so.Memory)
	}
}
