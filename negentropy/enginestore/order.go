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

// Placed is an item of a sync order and where its store holds it.
type Placed struct {
	negentropy.Item
	// At is the store's place for the item (the engine's vseq), for
	// reading it again with no look-up by id; 0 when not known.
	At uint64
}

// PlacedOrder is a [SyncOrder] that also says where its store holds each
// item. A [Store] over one remembers, for a [Listed] given it, where the
// items it lists are.
type PlacedOrder interface {
	SyncOrder
	// IteratePlaced is Iterate with each item's place.
	IteratePlaced(ctx context.Context, scope Scope, from negentropy.Item) iter.Seq2[Placed, error]
}

// placed is order's items with their places (none when order does not
// know them).
func placed(ctx context.Context, order SyncOrder, scope Scope, from negentropy.Item) iter.Seq2[Placed, error] {
	if p, ok := order.(PlacedOrder); ok {
		return p.IteratePlaced(ctx, scope, from)
	}
	return func(yield func(Placed, error) bool) {
		for it, err := range order.Iterate(ctx, scope, from) {
			if !yield(Placed{Item: it}, err) {
				return
			}
		}
	}
}
