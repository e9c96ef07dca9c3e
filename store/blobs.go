package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
)

// OpenBlobs opens the blob store a URL names: folder:PATH (a directory,
// possibly synced between devices) or s3://BUCKET/PREFIX?… (see
// [BlobURLForms]). It uses Options.Create, Logger and S3; ReadOnly is
// another word for not Create here (a Blobs writes only when its caller
// asks). Without Create a missing blob store — no folder, or one or a
// prefix holding nothing of ours — is an error wrapping [engine.ErrNoStore]
// whose text begins "no store at URL"; one holding segments but no marker
// is never adopted, with or without Create ([engine.ErrBlobStoreGone]).
// ctx bounds the requests made in opening.
//
// A caller that will mirror a store to the blob store opens it with
// [OpenBlobsFor] instead, so that an emptied folder is not set up anew.
func OpenBlobs(ctx context.Context, url string, opts *Options) (engine.Blobs, error) {
	return OpenBlobsFor(ctx, nil, url, opts)
}

// OpenBlobsFor is [OpenBlobs] for a blob store that the store s mirrors
// to (F10). With Options.Create, where s remembers a blob store at the
// URL's location ([mirror.Remembered]) and there is none there now — the
// folder or prefix emptied or removed — it refuses with a
// [*mirror.StoreChangedError] (Found "") before anything is created,
// unless Options.Adopt: a new marker there would hide that the backup s
// made is gone. Another store found there is refused later, by the
// mirror, naming both. s nil is OpenBlobs.
func OpenBlobsFor(ctx context.Context, s *engine.Store, url string, opts *Options) (engine.Blobs, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if url == "" {
		return nil, engine.Errorf(ErrBadURL, "a blob store URL is required (%s)", BlobURLForms)
	}
	l, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	l.blob = true
	if !l.blobBacked() {
		return nil, engine.Errorf(ErrBadURL, "%q is not a blob store URL (want %s)", url, BlobURLForms)
	}
	if err := ctx.Err(); err != nil {
		return nil, named("blob store", url, err)
	}
	return openBlobsFor(ctx, s, l, o)
}

// openBlobsFor is OpenBlobsFor of a parsed location.
func openBlobsFor(ctx context.Context, s *engine.Store, l location, o Options) (engine.Blobs, error) {
	if s != nil && o.Create && !o.Adopt {
		return openRemembered(ctx, s, l, o)
	}
	return openBlobs(ctx, l, o)
}

// openRemembered opens a blob store to create it where s remembers none
// at its location, and to open it only where s remembers one.
func openRemembered(ctx context.Context, s *engine.Store, l location, o Options) (engine.Blobs, error) {
	loc := l.locate()
	was, err := mirror.Remembered(ctx, s, loc)
	if err != nil {
		return nil, named(l.what(), l.url, err)
	}
	if was == "" {
		return openBlobs(ctx, l, o)
	}
	o.Create = false
	b, err := openBlobs(ctx, l, o)
	if errors.Is(err, engine.ErrNoStore) {
		return nil, named(l.what(), l.url, &mirror.StoreChangedError{Location: loc, Remembered: was, Empty: true})
	}
	return b, err
}

// openBlobs opens a parsed folder: or s3:// location.
func openBlobs(ctx context.Context, l location, o Options) (engine.Blobs, error) {
	if l.scheme == schemeFolder {
		if svc := folder.SyncServices(folder.OSFS{}, l.path); len(svc) > 1 && o.Logger != nil {
			o.Logger.Warn("the folder is inside the folders of more than one sync service; they will fight over it", "folder", l.path, "services", strings.Join(svc, ", "))
		}
		b, err := folder.Open(l.path, &folder.Options{Create: o.Create})
		if err != nil {
			if !o.Create && errors.Is(err, engine.ErrBlobStoreGone) && holdsNothingOfOurs(l.path) {
				return nil, &noStoreError{url: l.url, cause: err}
			}
			return nil, named(l.what(), l.url, err)
		}
		return b, nil
	}
	so := *o.S3
	so.Create = o.Create
	b, err := s3.Open(ctx, l.url, &so)
	if err != nil {
		err = withCtx(ctx, err)
		// Without Create the s3 backend reads the marker and stops there:
		// a prefix with no marker is no store (what else it holds is not
		// listed, so the backend's reason follows).
		if !o.Create && errors.Is(err, engine.ErrBlobStoreGone) {
			return nil, &noStoreError{url: l.url, cause: err, say: true}
		}
		return nil, named(l.what(), l.url, err)
	}
	return b, nil
}

// holdsNothingOfOurs reports whether a folder is missing or holds no name
// in the blob name grammar: no store was ever made there, as opposed to a
// store whose marker is gone.
func holdsNothingOfOurs(root string) bool {
	es, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	for _, e := range es {
		if engine.ValidBlobComponent(e.Name()) {
			return false
		}
	}
	return true
}

// withCtx makes an error that ctx's end caused wrap ctx's error, however
// the backend reported it.
func withCtx(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}
