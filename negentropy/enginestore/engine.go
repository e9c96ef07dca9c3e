package enginestore

import (
	"context"
	"iter"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/negentropy"
)

// Engine is the [SyncOrder] of an engine store (DESIGN.md, Negentropy and
// sync): a space's held versions as items, timestamp = createdAt in Unix
// ms (0 when it does not parse), id = the 32-byte digest in the version
// id, optionally only those of some collections. It streams from the
// store's sync-order index and loads nothing whole.
//
// The engine reads live, not from a snapshot: versions admitted while a
// session runs can make a [Store] built over it report [ErrChanged], and
// the session is then started again.
type Engine struct {
	Store *engine.Store
}

var _ PlacedOrder = Engine{}

// Iterate yields the scope's items from the first not below from.
func (e Engine) Iterate(ctx context.Context, scope Scope, from negentropy.Item) iter.Seq2[negentropy.Item, error] {
	return func(yield func(negentropy.Item, error) bool) {
		for it, err := range e.IteratePlaced(ctx, scope, from) {
			if !yield(it.Item, err) {
				return
			}
		}
	}
}

// IteratePlaced is Iterate with each item's vseq ([engine.SyncItem.Vseq]:
// 0 for an entry of a layout before 17).
func (e Engine) IteratePlaced(ctx context.Context, scope Scope, from negentropy.Item) iter.Seq2[Placed, error] {
	return func(yield func(Placed, error) bool) {
		start := engine.SyncKey{Millis: from.Timestamp, Digest: canonical.ID(from.ID)}
		for it, err := range e.Store.SyncOrder(ctx, scope.Space, start) {
			if err != nil {
				yield(Placed{}, err)
				return
			}
			if len(scope.Collections) > 0 && !slices.Contains(scope.Collections, it.Collection) {
				continue
			}
			if !yield(Placed{Item: negentropy.Item{Timestamp: it.Millis, ID: negentropy.ID(it.Digest)}, At: it.Vseq}, nil) {
				return
			}
		}
	}
}
