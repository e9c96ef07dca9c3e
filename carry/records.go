package carry

import (
	"context"
	"errors"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// Current lists the readable current version (engine.Store.Current) of
// each record of coll in a space that is not a delete, by key: how a node
// reads its registry's carriers and a carry space's records, and how a
// carrier reads its carry spaces.
func Current(ctx context.Context, st *engine.Store, spaceID, coll string) (map[string]*record.Version, error) {
	out := map[string]*record.Version{}
	seen := map[string]bool{}
	for v, err := range st.Export(ctx, spaceID) {
		if err != nil {
			return nil, err
		}
		if v.Collection != coll || seen[v.Key] {
			continue
		}
		seen[v.Key] = true
		cur, err := st.Current(ctx, spaceID, v.Key)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !cur.Deleted && cur.Collection == coll {
			out[v.Key] = cur
		}
	}
	return out, nil
}
