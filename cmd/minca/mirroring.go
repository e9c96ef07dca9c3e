package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/store"
)

// openMirror opens the store sp names (as a says), the blob store at
// blobURL (created when createBlobs) and a mirror between them, logging to
// log. What must exist is opened first, so a typo in it creates nothing,
// and a blob store is created only once the store is open and remembers
// none at its location (store.OpenBlobsFor: an emptied folder is refused
// unless --adopt). The caller closes the mirror, then the store, and
// flushes the store first when it wrote to it.
func openMirror(ctx context.Context, log *slog.Logger, sp *storeSpec, a storeAccess, blobURL string, createBlobs bool, o mirror.Options) (*mirror.Mirror, *store.Store, error) {
	var st *store.Store
	var b engine.Blobs
	var err error
	if a != createStore {
		if st, err = sp.open(ctx, a); err != nil {
			return nil, nil, err
		}
	} else {
		// The store is made below: first the blob store, if it is there
		// (a typo in its URL, or an unreachable bucket, makes no store).
		b, err = sp.openBlobs(ctx, nil, blobURL, false)
		if err != nil && !(createBlobs && errors.Is(err, engine.ErrNoStore)) {
			return nil, nil, err
		}
		if st, err = sp.open(ctx, a); err != nil {
			return nil, nil, err
		}
	}
	if b == nil {
		if b, err = sp.openBlobs(ctx, st.Engine(), blobURL, createBlobs); err != nil {
			st.Close()
			return nil, nil, err
		}
	}
	own, ok1 := st.Blobs().(engine.BlobStoreID)
	to, ok2 := b.(engine.BlobStoreID)
	if ok1 && ok2 && own.StoreID() == to.StoreID() {
		st.Close()
		return nil, nil, usageError("%s is the store's own blob store: a store is mirrored to it by every verb that writes", blobURL)
	}
	o.Logger = log
	o.Adopt = sp.adopt
	o.Geneses = judge.MirrorGeneses(st.Engine()) // a restore judges what it restores
	m, err := mirror.New(st.Engine(), b, &o)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return m, st, nil
}

// everySecond returns a mirror progress callback that calls f at most once
// a second, so a long backup or restore reports without flooding stderr.
func everySecond(f func(mirror.Stats)) func(mirror.Stats) {
	var last time.Time
	return func(ms mirror.Stats) {
		if time.Since(last) > time.Second {
			last = time.Now()
			f(ms)
		}
	}
}

// report prints a mirror step's result on stdout, also when the step
// failed part way (what it did is still worth knowing), and turns the
// step's error into exit 1 (blobFailed).
func report(s *stdio, blobURL string, res any, err error) error {
	_ = json.NewEncoder(s.out).Encode(res)
	if err == nil {
		return nil
	}
	return blobFailed(blobURL, err)
}

// blobFailed is failed(err) for a mirror step's error: named as the blob
// store's, by its URL, where err names no store of its own.
func blobFailed(blobURL string, err error) error {
	return failed(namedAs("blob store "+store.ShortURL(blobURL), err))
}
