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
// Failures are loud and named:
//
//   - A segment that fails its checks with the same bytes on two reads
//     Options.Reread apart is bad: Import reads every other segment, then
//     returns a [*BadSegmentsError] ([ErrBadSegment]) naming each and the
//     versions its trailer held; Round still exports; Run logs and goes
//     on; a good copy that arrives later is read. [Verify] checks every
//     segment of a blob store.
//
//   - The store remembers the blob store it found at each location and
//     refuses another there ([ErrBlobStoreChanged]) or one that lost
//     segments ([ErrBlobStoreShrunk]) unless Options.Adopt.
//
//   - Marker copies a sync service made converge on the smallest id; the
//     mirror's state follows it, and no segment is rewritten
//     (identity.go).
//
//   - Run waits out a blob store that is gone, up to Options.GoneGrace.
//
//   - Round removes copies of this writer's segments and of the marker
//     once proven identical (tidy.go), and leaves and logs the rest.
//
//     New(s *engine.Store, b engine.Blobs, opts *Options) (*Mirror, error)
//     Source(storeID string) string // the from a mirror admits as
//     (*Mirror).Export, Import, Compact, Round, Run(ctx); Writer(ctx); StoreID(); Stats(); Close()
//     Verify(ctx, b engine.Blobs, *VerifyOptions) ([]Problem, error)
//     DecodeSegment(data []byte) ([][]byte, error)
//
// A Mirror's methods are safe for concurrent use; they run one at a time.
package mirror
