package main

import (
	"context"
	"log/slog"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/store"
)

// blobURLHelp describes the blob store URLs openBlobs takes.
const blobURLHelp = store.BlobURLForms

// openBlobs opens the blob store a URL names (store.OpenBlobsFor) for the
// store s to mirror to (nil: for no store). create makes a new store (its
// marker) where there is none, unless s remembers another there and not
// adopt; without it a missing one is an error wrapping engine.ErrNoStore
// (exit 3). A folder or prefix holding segments but no marker is never
// adopted.
func openBlobs(ctx context.Context, s *engine.Store, url string, create, adopt bool, log *slog.Logger) (engine.Blobs, error) {
	b, err := store.OpenBlobsFor(ctx, s, url, &store.Options{Create: create, Adopt: adopt, Logger: log})
	return b, usageIfBadURL(err)
}
