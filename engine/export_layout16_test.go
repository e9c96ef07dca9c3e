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
	return rewriteFamily(kv, keys.Order, as, func(b Batch, k, v []byte) error {
		coll, vseq, ok := readOrder(v)
		if !ok || vseq == 0 {
			return nil
		}
		return b.Set(bytes.Clone(k), bytes.Clone(coll))
	})
}
