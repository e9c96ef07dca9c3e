// Package mirror couples an engine store to a blob store (02 §4.9;
// DESIGN.md, Segments, mirrors and compaction): segments, mirrors and
// compaction over any [engine.Blobs].
//
// A [Mirror] couples a Store to a blob store: Export writes new versions as
// this writer's segments, Import admits other writers' segments through
// the judge as a peer's versions, Compact rewrites this writer's own
// segments with superseded bodies as stubs and deletes only what it wrote
// and listed, after the new one is durable. Import admits as [Source] of
// the blob store, and the engine's change log keeps each change's source,
// so Export leaves out what that blob store brought, across restarts and
// for every mirror of it, and still writes it to the other blob stores the
// store mirrors to.
//
//	New(s *engine.Store, b engine.Blobs, opts *Options) (*Mirror, error)
//	Source(storeID string) string // the from a mirror admits as
//	(*Mirror).Export, Import, Compact, Round, Run(ctx); Writer(ctx); Stats(); Close()
//	DecodeSegment(data []byte) ([][]byte, error)
package mirror
