package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/minca-go/minca/backends/internal/localstore"
	"github.com/minca-go/minca/engine"
)

// Options configures Open; nil means the defaults.
type Options struct {
	// CacheSize is the block cache in bytes: what sstable blocks may take
	// in memory, besides the memtables. Default (0) 32 MiB; negative is
	// an error.
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes, at least
	// MinMemTable. Default 16 MiB.
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

	fs vfs.FS // the filesystem under Pebble (tests inject faults); nil is vfs.Default
	// noAutoCompact: Pebble compacts only when asked (tests: compactions
	// that come late, at their latest).
	noAutoCompact bool
}

// MinMemTable is the least MemTableSize: Pebble fails a store whose
// memtable cannot hold its own arena's first node, and one this small
// already flushes every few batches.
const MinMemTable = 64 << 10

func (o *Options) withDefaults() (Options, error) {
	var out Options
	if o != nil {
		out = *o
	}
	if out.CacheSize < 0 {
		return out, fmt.Errorf("pebble: CacheSize %d is negative", out.CacheSize)
	}
	if out.CacheSize == 0 {
		out.CacheSize = 32 << 20
	}
	if out.MemTableSize == 0 {
		out.MemTableSize = 16 << 20
	}
	if out.MemTableSize < MinMemTable {
		return out, fmt.Errorf("pebble: MemTableSize %d is less than the least, %d", out.MemTableSize, MinMemTable)
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	if out.ReadOnly {
		out.MustExist = true
	}
	return out, nil
}

// Store is an engine.KV on Pebble.
type Store struct {
	db       *pebble.DB
	lock     *localstore.Lock
	dir      string
	readOnly bool
	fatal    *fatal
	fs       vfs.FS // as Pebble was given it; nil is vfs.Default
}

var _ engine.KV = (*Store)(nil)

// memTables is how many memtables (the one taking writes and those being
// flushed) Pebble keeps before it stalls writes; their memory is reserved
// in the block cache.
const memTables = 2

// l0Compaction is the bytes of memtables that make L0CompactionThreshold:
// 8 sublevels of 16 MiB memtables (Pebble's default is 4; it starts an L0
// compaction once L0 is half the threshold deep). Nearly every batch's
// keys spread over the whole key space (ids, digests), so each L0
// compaction rewrites much of the level below: waiting for more files
// rewrites it half as often. It is counted in bytes, not files, so that
// smaller memtables (less memory) compact no more often: with 8 MiB
// memtables and the threshold at 8, an import's CPU a version was 15%
// higher.
const l0Compaction = 128 << 20

// l0Thresholds are the L0 sublevels that start a compaction (l0Compaction
// bytes of memtables of this size, from 4 to 32) and that stop writes
// until one is done (4 more, at least Pebble's default 12).
func l0Thresholds(memTable uint64) (compact, stop int) {
	compact = int(min(max(l0Compaction/memTable, 4), 32))
	return compact, max(compact+4, 12)
}

// bottomBlockSize is the target size of a data block in the bottom level,
// before zstd codes it. zstd finds more to share in a larger block (a
// record's head, its history entries and its versions' ids repeat the
// same ids and texts): at 100,000 versions, settled, 64 KiB blocks hold
// the store in 2.3 MB less than 16 KiB ones (−6%), at no more CPU a
// version at import; 128 KiB took 0.3 MB more off and makes each read of
// a block not in the cache decompress twice the bytes
// (bench/REPORT-engine.md). Options apply to the tables Pebble writes
// from then on: a store written before reads as it is, and its bottom
// level takes the new blocks as compactions rewrite it.
const bottomBlockSize = 64 << 10

// LockName is the lock file Open takes in the store directory.
const LockName = "minca.lock"

// Open opens the Pebble store in dir, creating it unless opts says it must
// exist.
func Open(dir string, opts *Options) (s *Store, err error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.MustExist {
		if err := mustExist(dir); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pebble: store %s: %w", dir, err)
	}
	lock, err := localstore.LockFile(filepath.Join(dir, LockName), localstore.Subject("pebble", dir), o.ReadOnly)
	if err != nil {
		return nil, err
	}
	s = &Store{lock: lock, dir: dir, readOnly: o.ReadOnly, fatal: newFatal(dir, o.Logger), fs: o.fs}
	defer func() {
		if err != nil {
			lock.Unlock()
		}
	}()
	if err := checkManifest(dir); err != nil {
		return nil, err
	}
	// Pebble accounts its memtables inside the block cache (each reserves
	// its size there). Sized at CacheSize alone, two full 32 MiB memtables
	// leave a 64 MiB cache holding no block at all, and every read goes to
	// the file: the cache gets room for the memtables Pebble keeps before
	// it stalls writes, so CacheSize is what blocks get.
	cache := pebble.NewCache(o.CacheSize + memTables*int64(o.MemTableSize))
	l0Compact, l0Stop := l0Thresholds(o.MemTableSize)
	defer cache.Unref()
	po := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                o.MemTableSize,
		MemTableStopWritesThreshold: memTables,
		L0CompactionThreshold:       l0Compact,
		L0StopWritesThreshold:       l0Stop,
		Logger:                      logger{s.fatal},
		EventListener:               s.fatal.listener(),
		ReadOnly:                    o.ReadOnly,
	}
	po.FS = o.fs
	po.DisableAutomaticCompactions = o.noAutoCompact
	if o.ReadOnly {
		po.FS = readOnlyFS{vfs.Default}
	}
	// Admission looks up many keys that are not there (is this version
	// held? waiting?): bloom filters answer those without reading blocks.
	// The bottom level, where nearly all of a store settles, is
	// compressed with zstd in 64 KiB blocks (bottomBlockSize): in 16 KiB
	// ones that is 0.66 the bytes of Snappy in 4 KiB blocks (0.4 of none). The
	// levels above keep Snappy's speed, the one above the bottom in 16
	// KiB blocks too: once a store outgrows the base level (a few hundred
	// MB), every L0 compaction writes that level, ~4 times the bytes
	// compactions write to the bottom in an import of 1,000,000 versions,
	// and coding it with zstd was half of what an import's compactions
	// grew by from 100,000 versions to 1,000,000; its bytes are coded
	// with zstd when they move down. (Pebble's Balanced profile, zstd's
	// level 1, is Snappy on this store's table format: it needs MinLZ.)
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		if i >= len(po.Levels)-2 {
			po.Levels[i].BlockSize = 16 << 10
		}
	}
	po.Levels[len(po.Levels)-1].BlockSize = bottomBlockSize
	po.Levels[len(po.Levels)-1].Compression = func() *sstable.CompressionProfile { return bottomCoding }
	if err := s.openDB(po); err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		if err := recordManifest(dir); err != nil {
			s.db.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *Store) openDB(po *pebble.Options) (err error) {
	defer s.guard(&err)
	db, err := pebble.Open(s.dir, po)
	if errors.Is(err, pebble.ErrDBDoesNotExist) {
		return localstore.NoStore(s.dir)
	}
	if err != nil {
		return s.wrap(err)
	}
	s.db = db
	return nil
}

// mustExist returns an error wrapping engine.ErrNoStore unless dir holds a
// Pebble store; it writes nothing.
func mustExist(dir string) error {
	desc, err := pebble.Peek(dir, vfs.Default)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !desc.Exists {
		return localstore.NoStore(dir)
	}
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	return nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Get returns a copy of the value at key.
func (s *Store) Get(key []byte) (_ []byte, err error) {
	if err := s.fatal.get(); err != nil {
		return nil, err
	}
	defer s.guard(&err)
	v, c, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: key %x", engine.ErrNotFound, key)
	}
	if err != nil {
		return nil, s.wrap(err)
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	return out, s.wrap(c.Close())
}

// NewIter iterates [lower, upper) over a consistent view of the store.
func (s *Store) NewIter(lower, upper []byte) (_ engine.Iterator, err error) {
	if err := s.fatal.get(); err != nil {
		return nil, err
	}
	defer s.guard(&err)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, s.wrap(err)
	}
	return &iter{s: s, it: it}, nil
}

// GetMany looks keys up (ascending) with one iterator: each seek uses the
// tables' bloom filters, as Get does, and starts from where the last one
// ended, which makes a sorted run of look-ups several times cheaper than
// as many Gets.
func (s *Store) GetMany(keys [][]byte, found func(i int, value []byte)) (err error) {
	if err := s.fatal.get(); err != nil {
		return err
	}
	defer s.guard(&err)
	// Most look-ups find nothing (a new version is not held, a new record
	// has no head): the bottom level's filters too, not only the others'.
	it, err := s.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return s.wrap(err)
	}
	for i, k := range keys {
		if it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k) {
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return s.wrap(err)
			}
			found(i, v)
		}
	}
	return s.wrap(errors.Join(it.Error(), it.Close()))
}

// NewBatch starts a batch; it only writes. An admission batch is a few
// MiB: Pebble keeps the buffer of a closed batch for the next one up to
// retainBatch bytes, instead of growing a new one from nothing each time.
// On a store opened read-only it fails with engine.ErrReadOnly.
func (s *Store) NewBatch() (engine.Batch, error) {
	if s.readOnly {
		return nil, s.errReadOnly()
	}
	if err := s.fatal.get(); err != nil {
		return nil, err
	}
	return &batch{s: s, b: s.db.NewBatch(pebble.WithMaxRetainedSizeBytes(retainBatch))}, nil
}

func (s *Store) errReadOnly() error {
	return &engine.StoreError{Subject: localstore.Subject("pebble", s.dir), Msg: "open read-only", Kind: engine.ErrReadOnly}
}

// retainBatch is the largest batch buffer kept for reuse, in bytes.
const retainBatch = 16 << 20

// Close flushes the memtables into a table (so the next open replays no
// log), closes Pebble, deletes the write-ahead logs the flush left spent
// and releases the lock. After a fatal failure it gives the store
// up instead (Pebble may never finish closing), keeps the directory
// locked, and returns the failure.
func (s *Store) Close() (err error) {
	if err := s.fatal.get(); err != nil {
		return err
	}
	err = s.await(func() error {
		// The memtables go to a table first: the next open, read-only
		// ones included, then replays no log into memory, and the logs
		// before the newest hold nothing.
		if s.readOnly {
			return s.wrap(s.db.Close())
		}
		if err := s.db.Flush(); err != nil {
			return s.wrap(errors.Join(err, s.db.Close()))
		}
		if err := s.db.Close(); err != nil {
			return s.wrap(err)
		}
		// The store is closed and whole either way: a log left behind
		// is deleted by the next open.
		if err := removeSpentLogs(s.fs, s.dir); err != nil {
			s.fatal.log.Warn("pebble: spent write-ahead logs not deleted", "store", s.dir, "err", err)
		}
		return nil
	})
	if s.fatal.get() != nil {
		return err
	}
	if !s.readOnly {
		err = errors.Join(err, recordManifest(s.dir))
	}
	return errors.Join(err, s.lock.Unlock())
}

// Compact flushes the memtables and compacts the whole key space, so reads
// measure a settled store rather than one mid-import (benchmarks, and after
// a large import): every key in the bottom level, in its coding (tables
// moved down unchanged are rewritten, markStrays).
func (s *Store) Compact(ctx context.Context) error {
	if s.readOnly {
		return s.errReadOnly()
	}
	return s.await(func() error {
		// The compaction itself moves tables into the bottom level (a
		// range of the level above that overlaps nothing there): those
		// are marked and rewritten by another pass, which moves nothing
		// down but the marks.
		for pass := 0; pass < maxCompactPasses; pass++ {
			marked, err := s.markStrays()
			if err != nil {
				return s.wrap(err)
			}
			if pass > 0 && marked == 0 {
				return nil
			}
			if err := s.db.Flush(); err != nil {
				return s.wrap(err)
			}
			if err := s.db.Compact(ctx, []byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, true); err != nil {
				return s.wrap(err)
			}
		}
		return nil
	})
}

// Reclaim flushes the memtables holding keys in [lower, upper) and
// compacts that range down to the bottom level (engine.Reclaimer): a value
// deleted there meets its tombstone in the rewrite and leaves the disk
// with the tables it was in, instead of waiting for a compaction Pebble
// picks by its own measures (the tables' depth in L0, their density of
// tombstones), which come late on a busy machine. The tables the rewrite
// reads are every one that overlaps the range: most of L0, usually, and
// the part of the level below that they span.
func (s *Store) Reclaim(lower, upper []byte) error {
	if s.readOnly {
		return s.errReadOnly()
	}
	if err := s.fatal.get(); err != nil {
		return err
	}
	return s.await(func() error { return s.wrap(s.db.Compact(context.Background(), lower, upper, false)) })
}

var _ engine.Reclaimer = (*Store)(nil)

// maxCompactPasses bounds Compact's passes: the first compacts the whole
// key space, the second rewrites what the first moved down unchanged, and
// a third would be needed only if writes went on beside them.
const maxCompactPasses = 3

// wrap names the store in an error from Pebble, on one line: damage found
// (a checksum failed, a file missing) wraps engine.ErrCorrupt and names the
// file where Pebble says which.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	if pebble.IsCorruptionError(err) || errors.Is(err, fs.ErrNotExist) {
		what := strings.TrimPrefix(localstore.OneLine(err.Error()), "pebble: ") // the store's kind is said already
		if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
			what = filepath.Base(info.Path) + ": " + what
		}
		return localstore.Corrupt("pebble", s.dir, what)
	}
	return localstore.Wrap("pebble", s.dir, err)
}

type iter struct {
	s       *Store
	it      *pebble.Iterator
	started bool
	err     error // a failure that stopped the iteration outside Pebble's Error
}

func (i *iter) Next() (ok bool) {
	if i.err != nil {
		return false
	}
	if i.err = i.s.fatal.get(); i.err != nil {
		return false
	}
	defer i.s.guard(&i.err)
	if !i.started {
		i.started = true
		return i.it.First()
	}
	return i.it.Next()
}
func (i *iter) Key() []byte   { return i.it.Key() }
func (i *iter) Value() []byte { return i.it.Value() }

func (i *iter) Err() error {
	if i.err != nil {
		return i.err
	}
	return i.s.wrap(i.it.Error())
}

func (i *iter) Close() (err error) {
	if err := i.s.fatal.get(); err != nil {
		return err // Pebble may not be able to release it
	}
	defer i.s.guard(&err)
	return i.s.wrap(i.it.Close())
}

type batch struct {
	s      *Store
	b      *pebble.Batch
	closed bool
}

func (b *batch) Set(key, value []byte) error { return b.b.Set(key, value, nil) }
func (b *batch) Delete(key []byte) error     { return b.b.Delete(key, nil) }

// Commit applies the batch; it waits for Pebble only until the store
// fails (see the package doc on Fatalf).
func (b *batch) Commit(d engine.Durability) error {
	if err := b.s.fatal.get(); err != nil {
		return err
	}
	opt := pebble.Sync
	if d == engine.NoSync {
		opt = pebble.NoSync
	}
	return b.s.await(func() error { return b.s.wrap(b.b.Commit(opt)) })
}

func (b *batch) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.s.fatal.get() != nil {
		return nil // a batch Pebble may be holding: left to the collector
	}
	return b.b.Close()
}
