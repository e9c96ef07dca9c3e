// Package store opens a store or a blob store from its URL (DESIGN.md,
// Backends: "a store is named by a URL"), with the mirror that makes a data
// folder or an S3 prefix a store; it is the one switch from a URL to a
// backend, for the command line and the node alike.
//
// API:
//
//	Open(ctx, url string, opts *Options) (*Store, error)
//	OpenBlobs(ctx, url string, opts *Options) (engine.Blobs, error)
//	OpenBlobsFor(ctx, s *engine.Store, url string, opts *Options) (engine.Blobs, error)
//	(*Store).Engine() *engine.Store; Blobs() engine.Blobs; Mirror() *mirror.Mirror; URL() string; Damage() error
//	(*Store).Flush(ctx) error; Close() error
//	Options{Judge, Indexer, Logger, Create, ReadOnly, Adopt, CacheDir, S3, Progress}
//	ErrBadURL; URLForms, BlobURLForms (help texts)
//
// URLs: pebble:PATH or a bare PATH (a Pebble directory), sqlite:PATH (the
// database file itself), memory:, folder:PATH, s3://BUCKET/PREFIX?endpoint=…
// &region=…&path-style=…&checksum=…. A folder: or s3:// store is a local
// Pebble index under Options.CacheDir with the blob store durable (DESIGN,
// Segments, mirrors and compaction). The index is named by where the blob
// store is (index-<hash of its location>), so it remembers the blob store
// it found there even when the folder is emptied; an index named by the
// store id (index-<store id>, as made before) is moved into place, since
// it may hold what a Flush has not exported yet. Deleted, an index is
// rebuilt from the blob store, losing only that.
//
// Guarantees:
//   - Only an opener that asks for it (Options.Create) creates a store.
//     Otherwise a missing store is an error wrapping [engine.ErrNoStore]
//     whose text is "no store at URL", the URL as given (for s3://, followed
//     by the backend's reason: a prefix without a marker is not listed), and
//     nothing is created: no directory, file, lock file or marker.
//   - A store opened ReadOnly is not written: the backend writes no lock
//     file or log, a write through the engine fails with
//     [engine.ErrReadOnly], and for folder: and s3:// nothing is written to
//     the folder or bucket (their index, a cache, is brought up to date).
//   - A folder: or s3:// store whose blob store holds bad segments opens
//     with everything else, and says which (Store.Damage); a damaged
//     Pebble or SQLite store does not open ([engine.ErrCorrupt]).
//   - A blob store a store mirrored to and finds gone or emptied is not
//     set up anew: OpenBlobsFor, and the opening of a folder: or s3://
//     store, refuse it before anything is created there
//     ([mirror.ErrBlobStoreChanged]) unless Options.Adopt.
//   - Close never does network work and never exports: a caller that wrote
//     to a folder: or s3:// store calls Flush, which returns once what the
//     store took in is durable in the blob store. What an interrupted Flush
//     (or a missing one) left is in the index, and the next Flush exports it.
//   - Open and Flush stop when ctx ends, returning an error wrapping ctx's
//     (Ctrl-C works during a long import or export).
//   - A URL naming nothing this package opens wraps [ErrBadURL]: the
//     caller's mistake (bad usage), not the store's state.
//
// A Store's methods are safe for concurrent use, Close excepted (called
// once, after every other call returned). The [engine.Store] it gives stays
// valid until Close.
package store
