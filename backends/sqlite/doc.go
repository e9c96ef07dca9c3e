// Package sqlite is an [engine.KV] on SQLite (modernc.org/sqlite, pure Go):
// one table of (key, value) blobs, WITHOUT ROWID, in one database file,
// the versions' values and the places of writers' lines 64 consecutive
// ones to a zstd block (blocks.go),
// other values of 128 bytes to 128 KiB coded with an S2 dictionary and
// Huffman codes the store makes from its first values (stores made
// before: no blocks, or the codes alone; compress.go; docs/stores.md, How
// a backend keeps values), a space's 33-byte tag in a key kept as a label
// of a byte or two that keeps the keys' order (labels.go, schema.go;
// docs/stores.md, How SQLite keeps keys).
// A store's path names that file, so `sqlite3 PATH` opens it; beside it
// are its lock (PATH.lock, gofrs/flock: a second opener gets
// [engine.ErrLocked] naming the path) and, while it is open, SQLite's
// PATH-wal and PATH-shm. A path that is a directory holding minca.sqlite
// is a store as earlier versions made them (DIR/minca.sqlite, locked by
// DIR/minca.lock): it is opened as it is, and the logger says how to move
// it into one file (minca store export | minca store import).
//
// Open creates the store unless [Options.MustExist] or [Options.ReadOnly]
// is set; then a path with no store is an error wrapping
// [engine.ErrNoStore] ("no store at PATH") and nothing is created.
// Read-only, nothing is written: the lock file is shared if it can be
// opened and not made otherwise, and the database is opened read-only and
// immutable — SQLite takes no lock and makes no -wal or -shm file — unless
// a crash left a write-ahead log to read, which SQLite reads through
// PATH-shm (see Store.dsn). A write fails with [engine.ErrReadOnly].
//
// Damage SQLite finds — a page that does not read as what it should be
// ("database disk image is malformed"), a file cut short, a file that is
// not a database — is an error wrapping [engine.ErrCorrupt], on one line,
// naming the store and its file. [Store.VerifyFiles] runs SQLite's
// integrity check over every page; the engine's Check calls it.
//
// Durability: the database is in WAL mode with synchronous=FULL. In WAL
// mode FULL syncs the log at every commit, so a transaction that committed
// survives a crash of the process or the machine; NORMAL, the usual WAL
// choice, syncs only at checkpoints and can lose the last commits on power
// loss — and the engine acknowledges a version only once it is durable.
// Every commit is therefore synced, engine.NoSync or not.
//
// Cost: a batch dirties a few thousand pages, each written to the log at
// commit. The log is checkpointed into the database every 16,384 pages
// (64 MiB, so the log file grows to about that), not every 1,000 as by
// default: a page rewritten by several batches in between is copied once.
// Statement journals (a multi-row INSERT keeps one) stay in memory
// (temp_store=MEMORY) instead of a temporary file written page by page.
package sqlite
