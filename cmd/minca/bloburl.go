package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
)

// blobURLHelp describes the blob store URLs openBlobs takes.
const blobURLHelp = "folder:PATH (a directory, possibly synced by Dropbox, iCloud Drive, OneDrive or Syncthing) or s3://BUCKET/PREFIX?endpoint=…&region=…&path-style=true&checksum=when_required"

// openBlobs opens the blob store a URL names. create makes a new store
// (its marker) where there is none; a folder or prefix holding segments
// but no marker is never adopted.
func openBlobs(ctx context.Context, url string, create bool, log *slog.Logger) (engine.Blobs, error) {
	switch {
	case strings.HasPrefix(url, "folder:"):
		path := strings.TrimPrefix(url, "folder:")
		if path == "" {
			return nil, usageError("blob store URL %q: folder:PATH needs a path", url)
		}
		if svc := folder.SyncServices(folder.OSFS{}, path); len(svc) > 1 {
			log.Warn("the folder is inside the folders of more than one sync service; they will fight over it", "folder", path, "services", strings.Join(svc, ", "))
		}
		b, err := folder.Open(path, &folder.Options{Create: create})
		if err != nil {
			return nil, fmt.Errorf("blob store %s: %w", url, err)
		}
		return b, nil
	case strings.HasPrefix(url, "s3://"):
		if _, err := s3.ParseURL(url); err != nil {
			return nil, usageError("%v", err)
		}
		b, err := s3.Open(ctx, url, &s3.Options{Create: create, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("blob store %s: %w", url, err)
		}
		return b, nil
	case url == "":
		return nil, usageError("a blob store URL is required (%s)", blobURLHelp)
	}
	return nil, usageError("blob store URL %q: want %s", url, blobURLHelp)
}

// blobKV is a store whose durable copy is a blob store (folder:PATH,
// s3://…): a local Pebble index under the user's cache directory, brought
// up to date from the blob store when opened and exported to it when
// closed (DESIGN, Segments, mirrors and compaction). The index is a cache:
// removing it loses nothing the blob store holds.
type blobKV struct {
	engine.KV
	blobs engine.Blobs
}

// openBlobKV opens the local index of a blob store and imports what is new.
func openBlobKV(url string) (engine.KV, error) {
	ctx := context.Background()
	b, err := openBlobs(ctx, url, true, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("store %s: no cache directory for its index: %w", url, err)
	}
	dir := filepath.Join(cache, "minca", "index-"+b.(engine.BlobStoreID).StoreID())
	kv, err := pebble.Open(dir, nil)
	if err != nil {
		return nil, fmt.Errorf("store %s: index %s: %w", url, dir, err)
	}
	f := &blobKV{KV: kv, blobs: b}
	if err := f.sync(ctx, false); err != nil {
		kv.Close()
		return nil, fmt.Errorf("store %s: %w", url, err)
	}
	return f, nil
}

// sync imports from the blob store, and exports to it, through an engine
// of its own on the same index (the caller's engine is not open then).
func (f *blobKV) sync(ctx context.Context, export bool) error {
	st, err := engine.Open(keepOpen{f.KV}, &engine.Options{Judge: defaultJudge()})
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := mirror.New(st, f.blobs, &mirror.Options{CompactAt: -1})
	if err != nil {
		return err
	}
	defer m.Close()
	if export {
		_, err = m.Export(ctx)
		return err
	}
	_, err = m.Import(ctx)
	return err
}

// Close exports what the store took in, then closes the index.
func (f *blobKV) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err := f.sync(ctx, true)
	return errors.Join(err, f.KV.Close())
}

// keepOpen lends a KV to an engine that must not close it.
type keepOpen struct{ engine.KV }

func (keepOpen) Close() error { return nil }
