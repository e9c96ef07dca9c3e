package main

import (
	"context"
	"log/slog"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/store"
)

// blobURLHelp describes the blob store URLs openBlobs takes.
const blobURLHelp = store.BlobURLForms

// openBlobs opens the blob store a URL names (store.OpenBlobs). create
// makes a new store (its marker) where there is none; without it a missing
// one is an error wrapping engine.ErrNoStore (exit 3). A folder or prefix
// holding segments but no marker is never adopted.
func openBlobs(ctx context.Context, url string, create bool, log *slog.Logger) (engine.Blobs, error) {
	b, err := store.OpenBlobs(ctx, url, &store.Options{Create: create, Logger: log})
	return b, usageIfBadURL(err)
}
