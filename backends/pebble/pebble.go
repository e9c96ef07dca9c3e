// Package pebble is the default [engine.KV]: an embedded Pebble LSM store in
// a directory (DESIGN.md, Backends). Synced commits are made durable
// through Pebble's write-ahead log (pebble.Sync). A store directory is
// locked (gofrs/flock on minca.lock) while open, so a second opener — in
// this process or another — gets [engine.ErrLocked] naming the path.
package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/gofrs/flock"

	"github.com/minca-go/minca/engine"
)

// Options configures Open; nil means the defaults.
type Options struct {
	// CacheSize is the block cache in bytes: what sstable blocks may take
	// in memory, besides the memtables. Default 64 MiB.
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes. Default 32 MiB.
	MemTableSize uint64
	// Logger receives Pebble's errors; nil logs them with slog.Default.
	// Pebble's informational messages are dropped.
	Logger *slog.Logger
	// ReadOnly opens an existing store for reading only: nothing is
	// written (no lock file, no log, no recovery), so a store on a
	// read-only filesystem or owned by another user can be read; a write
	// fails with engine.ErrReadOnly. Implies MustExist.
	ReadOnly bool
	// MustExist refuses to create a store: where there is none, Open
	// returns an error wrapping engine.ErrNoStore naming the path.
	// Default false (Open creates the store).
	MustExist bool
}

// Store is an engine.KV on Pebble.
type Store struct {
	db   *pebble.DB
	lock *flock.Flock
	dir  string
}

var _ engine.KV = (*Store)(nil)

// memTables is how many memtables (the one taking writes and those being
// flushed) Pebble keeps before it stalls writes; their memory is reserved
// in the block cache.
const memTables = 2

// LockName is the lock file Open takes in the store directory.
const LockName = "minca.lock"

// Open opens (creating if needed) the Pebble store in dir.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 64 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 32 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pebble: store %s: %w", dir, err)
	}
	lock := flock.New(filepath.Join(dir, LockName))
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("pebble: store %s: lock: %w", dir, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s is open in another process (or another Open in this one)", engine.ErrLocked, dir)
	}
	// Pebble accounts its memtables inside the block cache (each reserves
	// its size there). Sized at CacheSize alone, two full 32 MiB memtables
	// leave a 64 MiB cache holding no block at all, and every read goes to
	// the file: the cache gets room for the memtables Pebble keeps before
	// it stalls writes, so CacheSize is what blocks get.
	cache := pebble.NewCache(o.CacheSize + memTables*int64(o.MemTableSize))
	defer cache.Unref()
	po := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                o.MemTableSize,
		MemTableStopWritesThreshold: memTables,
		Logger:                      logger{o.Logger},
	}
	// Admission looks up many keys that are not there (is this version
	// held? waiting?): bloom filters answer those without reading blocks.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("pebble: open %s: %w", dir, err)
	}
	return &Store{db: db, lock: lock, dir: dir}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Get returns a copy of the value at key.
func (s *Store) Get(key []byte) ([]byte, error) { return get(s.db, key) }

func get(r pebble.Reader, key []byte) ([]byte, error) {
	v, c, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: key %x", engine.ErrNotFound, key)
	}
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	return out, c.Close()
}

// NewIter iterates [lower, upper) over a consistent view of the store.
func (s *Store) NewIter(lower, upper []byte) (engine.Iterator, error) {
	return newIter(s.db, lower, upper)
}

func newIter(r pebble.Reader, lower, upper []byte) (engine.Iterator, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &iter{it: it}, nil
}

// GetMany looks keys up (ascending) with one iterator: each seek uses the
// tables' bloom filters, as Get does, and starts from where the last one
// ended, which makes a sorted run of look-ups several times cheaper than
// as many Gets.
func (s *Store) GetMany(keys [][]byte, found func(i int, value []byte)) error {
	// Most look-ups find nothing (a new version is not held, a new record
	// has no head): the bottom level's filters too, not only the others'.
	it, err := s.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k) {
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return err
			}
			found(i, v)
		}
	}
	return errors.Join(it.Error(), it.Close())
}

// NewBatch starts a batch; it only writes. An admission batch is a few
// MiB: Pebble keeps the buffer of a closed batch for the next one up to
// retainBatch bytes, instead of growing a new one from nothing each time.
func (s *Store) NewBatch() (engine.Batch, error) {
	return &batch{b: s.db.NewBatch(pebble.WithMaxRetainedSizeBytes(retainBatch))}, nil
}

// retainBatch is the largest batch buffer kept for reuse, in bytes.
const retainBatch = 16 << 20

// Close flushes nothing extra (synced commits are already durable), closes
// Pebble and releases the lock.
func (s *Store) Close() error {
	err := s.db.Close()
	return errors.Join(err, s.lock.Unlock())
}

type iter struct {
	it      *pebble.Iterator
	started bool
}

func (i *iter) Next() bool {
	if !i.started {
		i.started = true
		return i.it.First()
	}
	return i.it.Next()
}
func (i *iter) Key() []byte   { return i.it.Key() }
func (i *iter) Value() []byte { return i.it.Value() }
func (i *iter) Err() error    { return i.it.Error() }
func (i *iter) Close() error  { return i.it.Close() }

type batch struct {
	b      *pebble.Batch
	closed bool
}

func (b *batch) Set(key, value []byte) error { return b.b.Set(key, value, nil) }
func (b *batch) Delete(key []byte) error     { return b.b.Delete(key, nil) }
func (b *batch) Commit(d engine.Durability) error {
	opt := pebble.Sync
	if d == engine.NoSync {
		opt = pebble.NoSync
	}
	return b.b.Commit(opt)
}
func (b *batch) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	return b.b.Close()
}

// logger passes Pebble's errors to slog and drops its chatter.
type logger struct{ l *slog.Logger }

func (l logger) Infof(format string, args ...any) {}
func (l logger) Errorf(format string, args ...any) {
	l.l.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (l logger) Fatalf(format string, args ...any) {
	l.l.Error("pebble: fatal: " + fmt.Sprintf(format, args...))
	os.Exit(1)
}

// Compact flushes the memtables and compacts the whole key space, so reads
// measure a settled store rather than one mid-import (benchmarks, and after
// a large import).
func (s *Store) Compact(ctx context.Context) error {
	if err := s.db.Flush(); err != nil {
		return err
	}
	return s.db.Compact(ctx, []byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, true)
}
