package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/minca-go/minca/backends/filedir"
	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
)

// Store is an open store: the engine on its backend and, for folder: and
// s3:// stores, the blob store that is its durable copy and the mirror
// that couples the local index to it.
//
// A Store's methods are safe for concurrent use; Close is called once, after
// every other call has returned.
type Store struct {
	url   string
	eng   *engine.Store
	blobs engine.Blobs   // folder: and s3:// only
	mir   *mirror.Mirror // folder: and s3:// opened to write only
	// damage is what opening found bad in a folder: or s3:// store's blob
	// store (Damage).
	damage error

	closeOnce sync.Once
	closeErr  error
}

// Open opens the store a URL names (DESIGN.md: a store is named by a URL):
//
//	pebble:PATH, or a bare PATH   a Pebble store in the directory PATH
//	sqlite:PATH                   a SQLite store in the database file PATH
//	memory:                       a new, empty store in memory
//	folder:PATH                   a local index with the data folder PATH durable
//	s3://BUCKET/PREFIX?…          a local index with the S3 prefix durable
//
// A folder: or s3:// store's index is a cache under Options.CacheDir:
// opening brings it up to date from the blob store (a mirror's Import,
// through Options.Judge), and [Store.Flush] exports what was taken in.
//
// Without Options.Create a missing store is an error wrapping
// [engine.ErrNoStore] whose text is "no store at URL" (the URL as given),
// and nothing is created: no directory, no file, no marker. A URL that
// names nothing this package opens wraps [ErrBadURL]. ctx bounds the work
// of opening (a blob store's requests and import); when it ends, Open
// returns an error wrapping ctx's.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	l, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, named("store", url, err)
	}
	if l.blobBacked() {
		return openMirrored(ctx, l, o)
	}
	kv, err := openLocal(l, o)
	if err != nil {
		return nil, err
	}
	if o.ReadOnly {
		kv = readOnlyKV{KV: kv, url: url}
	}
	eng, err := engine.Open(kv, &engine.Options{Judge: o.Judge, Indexer: o.Indexer, Waiting: o.Waiting, Files: filesOf(l), CacheSize: o.Memory.Held})
	if err != nil {
		kv.Close()
		return nil, named("store", url, err)
	}
	return &Store{url: url, eng: eng}, nil
}

// filesOf is where a store keeps its files' bytes (docs/stores.md,
// Files): files/ in a Pebble store's directory, PATH-files beside a SQLite
// database, in memory for memory:.
func filesOf(l location) engine.FileDir {
	switch l.scheme {
	case schemePebble:
		return filedir.Open(filepath.Join(l.path, "files"))
	case schemeSQLite:
		return filedir.Open(l.path + "-files")
	}
	return nil
}

// openLocal opens the KV of a pebble:, sqlite: or memory: store.
func openLocal(l location, o Options) (engine.KV, error) {
	switch l.scheme {
	case schemeMemory:
		// A memory store never exists before it is opened, and is gone
		// when closed: Create and ReadOnly change nothing but the engine's
		// writes.
		return memory.Open(nil), nil
	case schemePebble, schemeSQLite:
		// A belt for the backends' MustExist: a path that is not there is
		// no store, whatever the backend would make of it.
		if !o.Create {
			if _, err := os.Stat(l.path); errors.Is(err, fs.ErrNotExist) {
				return nil, &noStoreError{url: l.url}
			}
		}
	}
	var kv engine.KV
	var err error
	if l.scheme == schemePebble {
		kv, err = pebble.Open(l.path, o.Memory.pebble(&pebble.Options{ReadOnly: o.ReadOnly, MustExist: !o.Create, Logger: o.Logger}))
	} else {
		kv, err = sqlite.Open(l.path, &sqlite.Options{ReadOnly: o.ReadOnly, MustExist: !o.Create})
	}
	switch {
	case errors.Is(err, engine.ErrNoStore):
		return nil, &noStoreError{url: l.url, cause: err}
	case err != nil:
		return nil, named("store", l.url, err)
	}
	return kv, nil
}

// Engine is the version store. It stays valid until Close; a write to a
// store opened ReadOnly fails with [engine.ErrReadOnly].
func (s *Store) Engine() *engine.Store { return s.eng }

// Blobs is the blob store that is a folder: or s3:// store's durable copy;
// nil for the others.
func (s *Store) Blobs() engine.Blobs { return s.blobs }

// Mirror couples a folder: or s3:// store's index to its blob store; nil
// for the others and for a store opened ReadOnly. A caller that runs it
// (Run, Round) uses this one, never a second mirror of the same blob
// store on the same engine.
func (s *Store) Mirror() *mirror.Mirror { return s.mir }

// Damage is what opening a folder: or s3:// store found damaged in its
// blob store: an error wrapping a [*mirror.BadSegmentsError]
// ([mirror.ErrBadSegment]) naming each segment that could not be read and
// how many versions its trailer held. Those versions are missing from the
// store unless another segment held them; everything else is there. nil
// when nothing was found damaged, and for the other stores (a damaged
// Pebble or SQLite store does not open: [engine.ErrCorrupt]). A caller
// that reads the store says so, so that a partial answer is never taken
// for a whole one.
func (s *Store) Damage() error { return s.damage }

// URL is the store's URL as given to Open.
func (s *Store) URL() string { return s.url }

// Flush exports to the blob store of a folder: or s3:// store what the
// store took in and has not exported yet (this run's and any an earlier,
// interrupted Flush left), and returns once it is durable there. For the
// other stores, and a store opened ReadOnly, there is nothing to flush:
// their commits are durable when they return. A caller that wrote calls
// Flush before Close; Close never exports. When ctx ends Flush stops and
// returns an error wrapping ctx's; what it did not export stays in the
// index for the next Flush.
func (s *Store) Flush(ctx context.Context) error {
	if s.mir == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return about("store", s.url, fmt.Errorf("flush: %w", err))
	}
	if _, err := s.mir.Export(ctx); err != nil {
		return about("store", s.url, fmt.Errorf("flush: %w", err))
	}
	return nil
}

// Close closes the mirror, the engine and its backend. It does no network
// work and exports nothing (see [Store.Flush]); a second call returns the
// first's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.mir != nil {
			s.mir.Close()
		}
		s.closeErr = s.eng.Close()
	})
	return s.closeErr
}
