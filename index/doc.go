// Package index answers queries over the readable current versions of a
// store's records (02 §9.5): 06 §2.11's { collection, where? } with an
// order, a limit and a cursor, and live queries that deliver the changes
// of a result. docs/queries.md says exactly what each operator means, how
// results are ordered and paged, and which indexes answer what.
//
// The index is the store's [engine.Indexer]: the store calls it inside
// each write batch whenever a record's readable current version changes,
// so its entries (per space and collection: the versions by @createdAt, by
// key, by creator, by link target, by tag, and node-declared body fields)
// commit with the versions or not at all, and are rebuilt from the
// versions when the layout or the declared fields change. It knows nothing
// of spaces' rules: what it answers is what the store reads.
//
// # API
//
//	Parse(data []byte) (*Query, error)            // + ParseValue, ParseProposal (06 §2.11)
//	New(opts *Options) (*Index, error)            // then engine.Open(kv, &engine.Options{Indexer: ix}), ix.Attach(st)
//	Open(kv, eo *engine.Options, opts *Options) (*engine.Store, *Index, error)
//	(*Index).Find(ctx, space string, q *Query, account string) (Page, error)
//	(*Index).Scan(ctx, space, q, account, fn func(Entry) bool) (next string, err error)
//	(*Index).Watch(space string, q *Query, account string) (*Live, error)
//	(*Live).Changes() <-chan LiveChange; Err(); Close()
//	(*Index).Close()                              // ends the live queries
//
// # Guarantees
//
// The index never disagrees with the store's current versions: it is
// written in the same atomic batches. A page is the first Limit records
// after its cursor, in the query's order, at the time it is read; each
// record is read as of a whole batch. Live queries deliver changes in
// commit order, never block a write, and are dropped with [ErrSlow] or
// [ErrBehind] rather than miss a change silently. Malformed queries are
// refused with an [*Error] carrying a stable code ([Codes]) and the path
// of the bad member; nothing a query holds makes the index panic. All
// methods are safe for concurrent use; a [Query] is immutable. Entries
// returned by Find belong to the caller; those Scan hands out are valid
// only during the call.
package index
