package engine

import (
	"bytes"

	"github.com/minca-go/minca/engine/internal/keys"
)

// OrderValue is a sync-order entry's value as this layout writes it.
func OrderValue(vseq uint64, coll string) []byte { return orderValue(vseq, coll) }

// Layout16 turns kv into a store as layout 16 kept it (each sync-order
// entry the version's collection alone, not its vseq), and marks it as
// layout `as` (16, or earlier after Layout15's change).
func Layout16(kv KV, as byte) error {
	if err := Layout17(kv, as); err != nil {
		return err
	}
	b, err := kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	it, err := kv.NewIter([]byte{keys.Order}, []byte{keys.Order + 1})
	if err != nil {
		return err
	}
	for it.Next() {
		coll, vseq, ok := readOrder(it.Value())
		if !ok || vseq == 0 {
			continue
		}
		if err := b.Set(bytes.Clone(it.Key()), bytes.Clone(coll)); err != nil {
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	return commitAtLayout(kv, b, as)
}
