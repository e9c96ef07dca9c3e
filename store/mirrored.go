package store

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
)

// openMirrored opens a folder: or s3:// store: the blob store, its local
// index (a Pebble store under the cache directory, named by the blob
// store's id) and a mirror between them, and imports what the blob store
// holds that the index does not. Nothing is written to the blob store
// here; Flush writes.
func openMirrored(ctx context.Context, l location, o Options) (*Store, error) {
	if o.Judge == nil {
		return nil, fmt.Errorf("store %s: a folder: or s3:// store is opened with a judge (its index admits what the blob store holds)", l.url)
	}
	cache, err := o.cacheDir()
	if err != nil {
		return nil, err
	}
	b, err := openBlobs(ctx, l, o)
	if err != nil {
		return nil, err
	}
	idb, ok := b.(engine.BlobStoreID)
	if !ok || !engine.ValidBlobComponent(idb.StoreID()) {
		return nil, fmt.Errorf("store %s: the blob store has no store id", l.url)
	}
	dir := filepath.Join(cache, "index-"+idb.StoreID())
	// The index is a cache, written even by a read-only open: removing it
	// loses nothing the blob store holds.
	kv, err := pebble.Open(dir, &pebble.Options{Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("store %s: index %s: %w", l.url, dir, err)
	}
	// Opened ReadOnly, the import runs on an engine lent the index, and the
	// caller gets another on it that refuses writes.
	var ikv engine.KV = kv
	if o.ReadOnly {
		ikv = keepOpen{kv}
	}
	eng, err := engine.Open(ikv, &engine.Options{Judge: o.Judge})
	if err != nil {
		kv.Close()
		return nil, fmt.Errorf("store %s: index %s: %w", l.url, dir, err)
	}
	var m *mirror.Mirror
	fail := func(err error) (*Store, error) {
		if m != nil {
			m.Close()
		}
		eng.Close()
		if o.ReadOnly {
			kv.Close() // lent: the engine does not close it
		}
		return nil, fmt.Errorf("store %s: %w", l.url, err)
	}
	if m, err = mirror.New(eng, b, &mirror.Options{CompactAt: -1, Logger: o.Logger, Progress: o.Progress}); err != nil {
		return fail(err)
	}
	if _, err := m.Import(ctx); err != nil {
		return fail(withCtx(ctx, err))
	}
	if !o.ReadOnly {
		return &Store{url: l.url, eng: eng, blobs: b, mir: m}, nil
	}
	m.Close()
	eng.Close() // the index stays open: it was lent
	ro, err := engine.Open(readOnlyKV{KV: kv, url: l.url}, &engine.Options{Judge: o.Judge})
	if err != nil {
		kv.Close()
		return nil, fmt.Errorf("store %s: index %s: %w", l.url, dir, err)
	}
	return &Store{url: l.url, eng: ro, blobs: b}, nil
}
