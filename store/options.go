package store

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
)

// Options configure [Open] and [OpenBlobs]. nil means the defaults: open an
// existing store, for reading and writing, with no judge.
type Options struct {
	// Geneses, when set, makes the mirror between a folder: or s3://
	// store's index and its blob store carry each space's genesis beside
	// the segments (mirror.Options.Geneses), for the store's engine.
	Geneses func(*engine.Store) mirror.Geneses
	// Judge decides what the store admits (02 §9). Without one the
	// engine's Admit fails ([engine.ErrNoJudge]) and everything that reads
	// works. A folder: or s3:// store needs one: opening it admits into
	// its index what the blob store holds. Default nil.
	Judge engine.Judge
	// Indexer, when set, keeps indexes of the store's current versions in
	// its write batches (engine.Options.Indexer; package index): the
	// store is reindexed as it opens when its index was kept under
	// another layout, which a store opened ReadOnly refuses
	// ([engine.ErrReadOnly]). Default nil.
	Indexer engine.Indexer
	// Logger gets warnings (a folder inside two sync services' folders),
	// the mirror's and the S3 client's notices, and Pebble's errors.
	// Default nil: each backend's default (Pebble's errors to
	// slog.Default, the rest discarded).
	Logger *slog.Logger
	// Create makes the store where there is none. Only a verb that writes
	// creates a store; without Create a missing store is an error wrapping
	// [engine.ErrNoStore], and nothing is created. Default false.
	Create bool
	// ReadOnly opens an existing store for reading only: the backend
	// writes nothing (no lock file, no log; a store on a read-only
	// filesystem or owned by another user can be read), and a write
	// through [Store.Engine] fails with [engine.ErrReadOnly]. For folder:
	// and s3:// stores nothing is written to the folder or bucket; their
	// local index, a cache, is still brought up to date. Not with Create.
	// Default false.
	ReadOnly bool
	// Adopt takes a blob store that is not the one the store found at its
	// location before — the folder or prefix emptied or removed, or another
	// store put there (F10) — where it would be refused with
	// [mirror.ErrBlobStoreChanged]: by the mirror of a folder: or s3://
	// store, and by [OpenBlobsFor] before it sets up a new blob store
	// there. Default false.
	Adopt bool
	// CacheDir is where the local indexes of folder: and s3:// stores are
	// kept, one directory index-<hash of the blob store's location> each
	// (see the package doc). Default os.UserCacheDir()/minca.
	CacheDir string
	// S3 is passed to s3.Open for s3:// stores (credentials, HTTP client,
	// attempts, backoff, timeouts, request limits); its Create is set from
	// these Options, and its Logger when nil. Default nil (the s3
	// package's defaults).
	S3 *s3.Options
	// Progress, if set, is called as the mirror of a folder: or s3://
	// store reads segments (opening) and writes them ([Store.Flush]), from
	// the goroutine doing it; it must not call the Store.
	Progress func(mirror.Stats)
	// Waiting bounds the versions the engine holds aside as later (02
	// §9.5), in bytes and in time ([engine.WaitingLimits]). Default: the
	// engine's defaults, every source bounded.
	Waiting engine.WaitingLimits
	// Memory bounds what the store keeps in memory, below the backend's
	// and the engine's defaults where a field is set (store import's
	// --memory). Default: the zero Memory, every default.
	Memory Memory
}

// Memory is what a store keeps in memory besides the versions in flight:
// a Pebble store's block cache and memtables (also the local index of a
// folder: or s3:// store), and the versions the engine keeps for the
// judge's chain checks. Each is bounded by its own size, none by the
// store's. A zero field is the default.
type Memory struct {
	// BlockCache is a Pebble store's block cache in bytes
	// (pebble.Options.CacheSize; default 32 MiB).
	BlockCache int64
	// MemTable is the size of one of a Pebble store's two memtables in
	// bytes, at least MinMemTable (pebble.Options.MemTableSize; default
	// 16 MiB).
	MemTable uint64
	// Held is how many recently stored versions the engine keeps for the
	// judge's chain checks (engine.Options.CacheSize; default 8,192).
	Held int
}

// MinMemTable is the least Memory.MemTable.
const MinMemTable = pebble.MinMemTable

// pebble is o with the Pebble store's memory set.
func (m Memory) pebble(o *pebble.Options) *pebble.Options {
	o.CacheSize, o.MemTableSize = m.BlockCache, m.MemTable
	return o
}

// resolve clones o, fills the defaults and validates.
func (o *Options) resolve() (Options, error) {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Create && out.ReadOnly {
		return out, errors.New("minca/store: Create and ReadOnly together: a store opened to read is never created")
	}
	if out.S3 != nil {
		c := *out.S3
		out.S3 = &c
	} else {
		out.S3 = &s3.Options{}
	}
	if out.S3.Logger == nil {
		out.S3.Logger = out.Logger
	}
	if out.S3.MaxAttempts < 0 || out.S3.MaxBackoff < 0 || out.S3.MaxObject < 0 {
		return out, fmt.Errorf("minca/store: S3 options: a negative limit (MaxAttempts %d, MaxBackoff %v, MaxObject %d)", out.S3.MaxAttempts, out.S3.MaxBackoff, out.S3.MaxObject)
	}
	return out, nil
}

// cacheDir is the directory of the indexes of blob-backed stores.
func (o *Options) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("minca/store: no cache directory for the index of a folder: or s3:// store (set Options.CacheDir): %w", err)
	}
	return filepath.Join(d, "minca"), nil
}
