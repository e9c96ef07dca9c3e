package enginestore

import (
	"context"
	"iter"

	"github.com/minca-go/minca/negentropy"
)

// Scope is what is reconciled: one space, optionally only some collections
// of it (all when Collections is empty).
type Scope struct {
	Space       string
	Collections []string
}

// SyncOrder is what the engine exposes per space: its items in the order of
// Negentropy V1 §Preparation (timestamp, then id). The engine implements it;
// this package only reads it.
type SyncOrder interface {
	// Iterate yields the scope's items in order, starting at the first one
	// not below from, until the caller stops or the items end. An error is
	// yielded once, as the last pair. All calls made for one Store must
	// read the same snapshot of the order.
	Iterate(ctx context.Context, scope Scope, from negentropy.Item) iter.Seq2[negentropy.Item, error]
}
