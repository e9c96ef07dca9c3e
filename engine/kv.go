package engine

import "errors"

// KV is the ordered key-value store the engine lays its keys out on
// (DESIGN.md, Backends). backends/pebble, backends/sqlite and
// backends/memory implement it; the engine's key layout is the same on all
// of them. Keys compare bytewise.
//
// A KV is used by one Store at a time. Get, GetMany and NewIter may be
// called from many goroutines at once; the engine makes at most one Batch
// at a time.
type KV interface {
	Reader
	// GetMany looks up keys, given in ascending order without repeats, and
	// calls found with the index and value of each one held; value is valid
	// only during the call. It reads one consistent view of the store, and
	// costs less than a Get per key: admission reads ahead what a batch
	// needs with it.
	GetMany(keys [][]byte, found func(i int, value []byte)) error
	// NewBatch starts an atomic batch of writes.
	NewBatch() (Batch, error)
	// Close releases the store; batches and iterators must be closed first.
	Close() error
}

// Reader reads a KV.
type Reader interface {
	// Get returns a copy of the value at key, or an error wrapping
	// [ErrNotFound] that names the key.
	Get(key []byte) ([]byte, error)
	// NewIter iterates the keys in [lower, upper) in ascending order;
	// upper nil means no bound.
	NewIter(lower, upper []byte) (Iterator, error)
}

// Iterator walks keys in ascending order. Key and Value are valid only until
// the next call to Next or Close. It is used from one goroutine.
type Iterator interface {
	// Next moves to the next key (the first, on the first call) and reports
	// whether there is one; false at the end or on an error.
	Next() bool
	Key() []byte
	Value() []byte
	// Err is the error that stopped the iteration, if any.
	Err() error
	Close() error
}

// Batch is an atomic set of writes. It does not read: the engine keeps
// what a batch wrote in memory and reads it there. Nothing is visible to
// readers until Commit returns nil. The batch may keep the key and value
// slices given to Set and Delete until Commit or Close; the caller does not
// change them.
type Batch interface {
	Set(key, value []byte) error
	Delete(key []byte) error
	// Commit applies the batch atomically. With [Sync] it returns only
	// once the writes are durable (survive a crash of the process or
	// machine); with [NoSync] they may be lost by a crash, never torn.
	Commit(d Durability) error
	// Close discards the batch if it was not committed.
	Close() error
}

// Durability is whether a batch's Commit waits until its writes are
// durable. The engine acknowledges a version only once the batch holding
// it committed with [Sync].
type Durability uint8

const (
	// Sync: Commit returns once the writes survive a crash of the process
	// or the machine. The zero value, so a forgotten argument is the safe
	// one.
	Sync Durability = iota
	// NoSync: Commit returns once the writes are visible; a crash may lose
	// them (whole batches, never part of one).
	NoSync
)

// String is "sync" or "nosync".
func (d Durability) String() string {
	if d == NoSync {
		return "nosync"
	}
	return "sync"
}

// Sentinel errors, tested with errors.Is.
var (
	// ErrNotFound: the key, version, record or value is not held.
	ErrNotFound = errors.New("minca/engine: not found")
	// ErrLocked: another process has the store open.
	ErrLocked = errors.New("minca/engine: store is locked by another process")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("minca/engine: store is closed")
	// ErrCorrupt marks damaged data: what does not decode as the engine
	// wrote it, and what a backend finds damaged (a checksum that fails, a
	// file of the store missing or cut short). The error's text names the
	// store and what is damaged.
	ErrCorrupt = errors.New("minca/engine: corrupt")
	// ErrNoStore: a store that must exist (opened to read, or without
	// creating) is not there. Only a verb that writes creates a store.
	ErrNoStore = errors.New("minca/engine: no store")
	// ErrReadOnly: a write to a store opened read-only.
	ErrReadOnly = errors.New("minca/engine: store is open read-only")
	// ErrUnreachable: a store, bucket or peer could not be reached (a
	// connection refused or cut, a timeout, a server error that persisted
	// through every retry); trying again later may succeed.
	ErrUnreachable = errors.New("minca/engine: unreachable")
)

// Reclaimer is a KV that can give back at once the disk space of what was
// deleted in a range of keys: a KV that keeps deleted values on disk until
// a rewrite it schedules itself (Pebble's compactions) implements it, so
// the engine bounds in bytes what dropped waiting versions take on disk
// (WaitingLimits.MaxDroppedBytes). A KV that reuses the space of a delete
// by itself (SQLite's free pages, memory) need not.
type Reclaimer interface {
	// Reclaim rewrites [lower, upper) so that no value deleted there
	// before the call is kept on disk when it returns (files still open
	// to a reader aside). It may take as long as that rewrite.
	Reclaim(lower, upper []byte) error
}

// ImportBatcher is a KV that says how many versions one batch of a bulk
// import ([Store.ImportBatch]: `minca store import`, `minca bench
// engine-import`) holds best on it. A KV without it takes
// [DefaultImportBatch].
type ImportBatcher interface {
	// ImportBatch is that many versions, at least 1.
	ImportBatch() int
}

// DefaultImportBatch is how many versions one batch of a bulk import
// holds on a KV that does not say (ImportBatcher): large enough that the
// synced commit is paid rarely, small enough to keep memory flat.
const DefaultImportBatch = 1000
