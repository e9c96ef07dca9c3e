package engine

import "errors"

// KV is the ordered key-value store the engine lays its keys out on
// (DESIGN.md, Backends). backends/pebble, backends/sqlite and
// backends/memory implement it; the engine's key layout is the same on all
// of them. Keys compare bytewise.
//
// A KV is used by one Store at a time. Get and NewIter may be called from
// many goroutines at once; the engine makes at most one Batch at a time.
type KV interface {
	Reader
	// NewBatch starts an atomic batch of writes whose reads see its own
	// writes over the store's.
	NewBatch() (Batch, error)
	// Close releases the store; batches and iterators must be closed first.
	Close() error
}

// Reader reads a KV or a batch.
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

// Batch is an atomic set of writes that also reads: Get and NewIter see its
// own writes over the store's. Nothing is visible to other readers until
// Commit returns nil. The engine closes every iterator of a batch before it
// writes to the batch again.
type Batch interface {
	Reader
	Set(key, value []byte) error
	Delete(key []byte) error
	// Commit applies the batch atomically. With sync it returns only once
	// the writes are durable (survive a crash of the process or machine).
	Commit(sync bool) error
	// Close discards the batch if it was not committed.
	Close() error
}

// Sentinel errors, tested with errors.Is.
var (
	// ErrNotFound: the key, version, record or value is not held.
	ErrNotFound = errors.New("minca/engine: not found")
	// ErrLocked: another process has the store open.
	ErrLocked = errors.New("minca/engine: store is locked by another process")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("minca/engine: store is closed")
	// ErrCorrupt marks data that does not decode as the engine wrote it.
	ErrCorrupt = errors.New("minca/engine: corrupt")
)
