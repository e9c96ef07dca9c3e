package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/minca-go/minca/backends/filedir"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
)

// openMirrored opens a folder: or s3:// store: the blob store, its local
// index (a Pebble store under the cache directory, named by where the blob
// store is) and a mirror between them, and imports what the blob store
// holds that the index does not. Nothing is written to the blob store
// here but, with Create, the marker of a new one; Flush writes.
//
// The index is opened before the blob store when it is there: it
// remembers the blob store it found at this location (F10), so a folder
// emptied or removed is refused before a new marker is made, and one
// replaced by another store is refused by the mirror, naming both.
func openMirrored(ctx context.Context, l location, o Options) (*Store, error) {
	if o.Judge == nil {
		return nil, about("store", l.url, errors.New("a folder: or s3:// store is opened with a judge (its index admits what the blob store holds)"))
	}
	cache, err := o.cacheDir()
	if err != nil {
		return nil, err
	}
	ix := &index{dir: filepath.Join(cache, indexName(l.locate())), url: l.url, o: o}
	defer ix.closeUnlessKept()
	var b engine.Blobs
	if _, err := os.Stat(ix.dir); err == nil {
		if err := ix.open(); err != nil {
			return nil, err
		}
		b, err = openBlobsFor(ctx, ix.eng, l, o)
		if err != nil {
			return nil, err
		}
	} else {
		// No index: nothing is remembered, and nothing is made until the
		// blob store is found (or made, with Create).
		if b, err = openBlobs(ctx, l, o); err != nil {
			return nil, err
		}
		if err := ix.adoptOld(b); err != nil {
			return nil, err
		}
		if err := ix.open(); err != nil {
			return nil, err
		}
	}
	mo := &mirror.Options{CompactAt: -1, Adopt: o.Adopt, Logger: o.Logger, Progress: o.Progress}
	if o.Geneses != nil {
		mo.Geneses = o.Geneses(ix.eng)
	}
	m, err := mirror.New(ix.eng, b, mo)
	if err != nil {
		return nil, about("store", l.url, err)
	}
	// Bad segments stop nothing: the import read every other one, and the
	// store is opened with what it holds, its damage named (Store.Damage).
	var damage error
	if _, err := m.Import(ctx); err != nil {
		if !errors.Is(err, mirror.ErrBadSegment) || ctx.Err() != nil {
			m.Close()
			return nil, about("store", l.url, withCtx(ctx, err))
		}
		damage = about("store", l.url, err)
	}
	if !o.ReadOnly {
		ix.kept = true
		return &Store{url: l.url, eng: ix.eng, blobs: b, mir: m, damage: damage}, nil
	}
	m.Close()
	// Opened ReadOnly, the import ran on an engine lent the index; the
	// caller gets another on it that refuses writes.
	ix.eng.Close()
	ix.eng = nil
	ro, err := engine.Open(readOnlyKV{KV: ix.kv, url: l.url}, &engine.Options{Judge: o.Judge, Indexer: o.Indexer, Waiting: o.Waiting, Files: ix.files(), CacheSize: o.Memory.Held})
	if err != nil {
		return nil, ix.error(err)
	}
	ix.kept = true
	return &Store{url: l.url, eng: ro, blobs: b, damage: damage}, nil
}

// indexName is the directory, under the cache directory, of the index of
// the blob store at a location ([engine.BlobLocator]): keyed by where the
// blob store is, not by the id in its marker, so that the index of a
// folder emptied and set up again still remembers the store it held.
func indexName(location string) string {
	h := sha256.Sum256([]byte(location))
	return "index-" + hex.EncodeToString(h[:16])
}

// index is the local index of a folder: or s3:// store being opened.
type index struct {
	dir, url string
	o        Options
	kv       engine.KV
	eng      *engine.Store // the index's engine; lent kv when o.ReadOnly
	kept     bool          // handed to a Store: not closed on the way out
}

// files is where the index keeps its files' bytes: files/ in its
// directory (docs/stores.md, Files).
func (ix *index) files() engine.FileDir { return filedir.Open(filepath.Join(ix.dir, "files")) }

// open opens the index, making it where there is none. The index is a
// cache, written even by a read-only open: what it holds beyond the blob
// store is only what a Flush has not exported yet.
func (ix *index) open() error {
	kv, err := pebble.Open(ix.dir, ix.o.Memory.pebble(&pebble.Options{Logger: ix.o.Logger}))
	if err != nil {
		return ix.error(err)
	}
	ix.kv = kv
	var ikv engine.KV = kv
	if ix.o.ReadOnly {
		ikv = keepOpen{kv}
	}
	if ix.eng, err = engine.Open(ikv, &engine.Options{Judge: ix.o.Judge, Indexer: ix.o.Indexer, Waiting: ix.o.Waiting, Files: ix.files(), CacheSize: ix.o.Memory.Held}); err != nil {
		return ix.error(err)
	}
	return nil
}

// adoptOld moves into place an index kept under the blob store's id (the
// name indexes had before they were keyed by location), where there is
// one: it may hold versions a Flush has not exported yet, and this
// store's writer, so it is moved, not rebuilt.
func (ix *index) adoptOld(b engine.Blobs) error {
	idb, ok := b.(engine.BlobStoreID)
	if !ok || !engine.ValidBlobComponent(idb.StoreID()) {
		return about("store", ix.url, errors.New("the blob store has no store id"))
	}
	old := filepath.Join(filepath.Dir(ix.dir), "index-"+idb.StoreID())
	if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.Rename(old, ix.dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return about("store", ix.url, fmt.Errorf("its index %s: move it to %s: %w", old, ix.dir, err))
	}
	return nil
}

// error is an error opening the index: said as the index's (a cache the
// blob store rebuilds), not the blob store's.
func (ix *index) error(err error) error {
	return about("store", ix.url, fmt.Errorf("its index (a cache: remove %s to rebuild it from the blob store): %w", ix.dir, err))
}

// closeUnlessKept closes what open opened unless a Store took it.
func (ix *index) closeUnlessKept() {
	if ix.kept {
		return
	}
	if ix.eng != nil {
		ix.eng.Close()
	}
	if ix.kv != nil && (ix.eng == nil || ix.o.ReadOnly) {
		ix.kv.Close() // not the engine's to close
	}
}
