// Package pebble is the default [engine.KV]: an embedded Pebble LSM store in
// a directory (DESIGN.md, Backends). Synced commits are made durable
// through Pebble's write-ahead log (pebble.Sync). A store directory is
// locked (gofrs/flock on minca.lock) while open, so a second opener — in
// this process or another — gets [engine.ErrLocked] naming the path.
//
// # Opening
//
// [Open] creates the store unless [Options.MustExist] or
// [Options.ReadOnly] is set; then a directory holding no Pebble store is
// an error wrapping [engine.ErrNoStore] ("no store at PATH"), and nothing
// is created. Read-only, nothing in the directory is written: no lock file
// is made (an existing minca.lock is shared, so readers exclude a writer
// but not each other), Pebble opens with its ReadOnly option (it replays
// the log into memory and flushes, compacts and deletes nothing) and its
// own LOCK file is not taken; a store on a read-only filesystem or owned
// by another user can be read. A write fails with [engine.ErrReadOnly].
//
// # Damage
//
// Damage found in the store — a checksum that fails reading a block, a
// table file missing, a MANIFEST cut short — is an error wrapping
// [engine.ErrCorrupt], on one line, naming the store's directory and the
// damaged file. It comes from the call that found it (Open, Get, GetMany,
// an iterator's Err); other data stays readable. [Store.VerifyFiles] reads
// every block of every table, those reads never touch included (a table's
// filter), and checks its checksum; the engine's Check calls it.
//
// Pebble reads a MANIFEST up to its first bad record and takes what it read
// as the store's state, which is right for the torn last record a crash
// leaves; a MANIFEST damaged further back would open as an older store,
// silently missing what the lost edits added (and, opened to write, it may
// delete the tables they added as obsolete). So the store reads the MANIFEST
// first: a record that fails its checksum with good records after it is
// damage. A MANIFEST only grows, and the store writes its name and length
// to minca.manifest at each open and close: a MANIFEST shorter than that,
// or ending in a torn record before that length, is damage too. (A store
// never opened to write since minca.manifest was introduced has no length
// to compare: a MANIFEST cut back to a record boundary there is read as
// Pebble reads it.)
//
// Pebble calls its logger's Fatalf where it cannot go on (a MANIFEST write
// that failed, an invariant broken) and expects the process to end. Here
// Fatalf never ends the process: it records the failure, and from then on
// every call on the store returns it (wrapping engine.ErrCorrupt when the
// failure is damage found). On a goroutine inside one of the store's calls
// it unwinds that call, which returns the error. On one of Pebble's own
// goroutines (a flush or compaction whose MANIFEST write failed) it cannot
// unwind, so it parks that goroutine for good: nothing more is written by
// it, calls waiting on it (a commit, a flush) return the error instead,
// and Close gives up the store without waiting for it (the directory stays
// locked until the process ends). A panic inside Pebble during one of the
// store's calls (data damaged past what a checksum catches) is treated the
// same way.
package pebble
