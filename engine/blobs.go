package engine

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Blobs is a store of immutable named objects: the synced data folder
// (backends/folder) and S3 (backends/s3) are ones. A mirror keeps its
// segments in one (DESIGN, Backends; 02 §4.9).
//
// Names follow [ValidBlobName]. A backend ignores, in List, every name
// outside that grammar: sync services add conflict copies, temp files and
// placeholders beside ours, and a name is a hint, never an authority.
//
// Implementations are safe for concurrent use. Errors wrap the sentinels
// below with the operation and the name ([*BlobError]).
type Blobs interface {
	// List returns up to limit objects whose names start with prefix and
	// sort after the name after (byte order; "" = from the start), in
	// ascending byte order. Fewer than limit means the listing is complete.
	// limit ≤ 0 means a backend's default page size.
	List(ctx context.Context, prefix, after string, limit int) ([]BlobInfo, error)
	// Get returns an object's bytes: [ErrBlobNotFound] when there is none,
	// [ErrBlobUnavailable] when it exists but cannot be read yet (a cloud
	// placeholder not downloaded); either may happen to a listed name.
	Get(ctx context.Context, name string) ([]byte, error)
	// Put creates an object, visible whole or not at all, durable when Put
	// returns nil. It never overwrites: an existing name gives
	// [ErrBlobExists], whatever its content. Where a backend cannot create
	// exclusively (a folder; S3 without conditional writes) two Puts of one
	// name racing may both succeed and the last one stays; a writer's names
	// are its own and content-addressed, so they race only with the same
	// bytes.
	Put(ctx context.Context, name string, data []byte) error
	// Delete removes an object; deleting one that is gone is not an error.
	Delete(ctx context.Context, name string) error
}

// BlobInfo is one listed object.
type BlobInfo struct {
	Name string
	Size int64 // bytes, as the backend reports them; a hint, checked on read
	// Pending is true for an object the backend knows of but cannot read
	// yet (a cloud placeholder); Get would return ErrBlobUnavailable.
	Pending bool
	ModTime time.Time // the backend's clock; never used to order anything
}

// BlobDirs is an optional ability of a Blobs: list the next path
// components under a prefix ("segments/" → the writer ids), so a reader
// can list each writer from its own bound instead of everything.
type BlobDirs interface {
	// Dirs returns the distinct valid components c such that some name
	// starts with prefix + c + "/", sorted.
	Dirs(ctx context.Context, prefix string) ([]string, error)
}

// BlobWatcher is an optional ability of a Blobs: a hint that something may
// have changed. It is never a source of truth (a watcher misses events and
// overflows): readers still rescan on a timer.
type BlobWatcher interface {
	// Watch sends on the returned channel (coalesced, never blocking the
	// backend) when names under the store may have changed, until ctx ends.
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// BlobStrays is an optional ability of a Blobs: list objects whose names
// are outside the grammar but could be copies of ours that a sync service
// renamed (conflicted copies, "name 2"). A reader may salvage them by
// validating their content; it never deletes them.
type BlobStrays interface {
	Strays(ctx context.Context, prefix string) ([]BlobInfo, error)
}

// BlobStrayRemover is an optional ability of a [BlobStrays]: remove a
// stray that is a copy of an object the caller keeps. It removes name only
// if it holds exactly same — bytes the caller compared with what it keeps —
// and otherwise leaves it and returns an error: what is not proven a copy
// is never removed (02 §4.9: a writer removes only what is its own).
type BlobStrayRemover interface {
	RemoveStray(ctx context.Context, name string, same []byte) error
}

// BlobStoreID is an optional ability of a Blobs: the random id written in
// the store's marker when it was created, so local state about a blob
// store (a writer id, what was read) follows the store, not its path.
type BlobStoreID interface {
	StoreID() string
}

// BlobMarkers is an optional ability of a Blobs whose marker a sync
// service can copy (a folder: two devices setting it up at once leave
// "minca-store (… conflicted copy …).json" or "minca-store 2.json", F1).
// Every device applies one rule to the markers it sees — the store's id
// is the smallest valid id among them — so all converge on one id.
type BlobMarkers interface {
	// StoreIDs reads the marker and its copies again and returns the
	// distinct valid ids, sorted: the first is the store's id from now on
	// ([BlobStoreID] says so too). None is [ErrBlobStoreGone].
	StoreIDs(ctx context.Context) ([]string, error)
	// TidyMarkers removes the copies of the marker that are byte-identical
	// to it, and returns them and the copies it left (other content).
	TidyMarkers(ctx context.Context) (removed, left []string, err error)
}

// BlobLocator is an optional ability of a Blobs: where it is (a folder's
// absolute path), so a store that mirrors to it can remember which blob
// store it found there and notice another in its place — a folder emptied
// or gone and set up again (F10).
type BlobLocator interface {
	Locate() string
}

// Sentinel errors of a Blobs, tested with errors.Is.
var (
	ErrBlobNotFound    = errors.New("minca/engine: blob not found")
	ErrBlobExists      = errors.New("minca/engine: blob exists")
	ErrBlobUnavailable = errors.New("minca/engine: blob not yet available")
	// ErrBlobStoreGone: the store's marker is missing, or its root is gone
	// or emptied. Nothing may be compacted, deleted or re-created: the
	// caller stops (a drive unplugged must not look like "all deleted").
	ErrBlobStoreGone = errors.New("minca/engine: blob store marker missing")
	// ErrBlobName: a name outside [ValidBlobName].
	ErrBlobName = errors.New("minca/engine: invalid blob name")
)

// BlobError is an error of one operation on one named object.
type BlobError struct {
	Op   string // "list", "get", "put", "delete"
	Name string
	Err  error
}

func (e *BlobError) Error() string { return e.Op + " " + e.Name + ": " + e.Err.Error() }
func (e *BlobError) Unwrap() error { return e.Err }

// MaxBlobName is the longest valid name, in bytes: well under the path
// limits of the sync services (F12: 260 on Windows, 400 on OneDrive).
const MaxBlobName = 160

// ValidBlobName reports whether name is in the grammar every object of
// ours follows: components joined by "/", each 1–64 bytes of [a-z0-9.-]
// starting with [a-z0-9] and not ending in "." (so no hidden or temp names,
// no case clashes, nothing a sync service rejects).
func ValidBlobName(name string) bool {
	if len(name) == 0 || len(name) > MaxBlobName {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if !ValidBlobComponent(c) {
			return false
		}
	}
	return true
}

// ValidBlobComponent reports whether c is one component of a valid name.
// Windows device names ("con", "nul.txt", "com1") are refused (F12).
func ValidBlobComponent(c string) bool {
	if len(c) == 0 || len(c) > 64 || c[len(c)-1] == '.' {
		return false
	}
	stem, _, _ := strings.Cut(c, ".")
	switch stem {
	case "con", "prn", "aux", "nul":
		return false
	}
	if len(stem) == 4 && (stem[:3] == "com" || stem[:3] == "lpt") && stem[3] >= '0' && stem[3] <= '9' {
		return false
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		switch {
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9':
		case (b == '.' || b == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
