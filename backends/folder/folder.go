// Package folder is an [engine.Blobs] on a directory, possibly one that
// Dropbox, iCloud Drive, OneDrive or Syncthing syncs between devices
// (DESIGN, Segments, mirrors and compaction; ../shared/research F1–F13).
//
// Guarantees:
//   - Put publishes atomically: a temp file outside the name grammar
//     (".minca-….tmp") in the target directory, written, fsynced, renamed
//     into place, then the directory fsynced. A crash at any step leaves
//     the name absent or whole. It never overwrites.
//   - List returns only names in the grammar ([engine.ValidBlobName]) and
//     walks only directories in it: conflict copies, temp files, hidden
//     directories (.stversions, .dropbox.cache) are not ours. A placeholder
//     (".x.icloud", or a dataless file) is listed as Pending; Get on it is
//     [engine.ErrBlobUnavailable], never a forced download.
//   - A marker file (minca-store.json) holds the store's id. Without it
//     every operation fails with [engine.ErrBlobStoreGone]: a folder that
//     is missing, unmounted or emptied is never taken for an empty store.
//     Copies of it a sync service made (two devices setting up one folder
//     at once) are read too, and the smallest valid id is the store's
//     (markers.go); copies identical to the marker can be tidied away.
//   - Watch is a hint (fsnotify); callers rescan on a timer anyway.
//
// A Store is safe for concurrent use.
package folder

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/minca-go/minca/engine"
)

// MarkerName is the marker file at the root of every folder store.
const MarkerName = "minca-store.json"

// Options configure a folder store. nil means defaults.
type Options struct {
	// FS is the filesystem; nil is the OS's.
	FS FS
	// Create makes a new store (the root and its marker) when the root is
	// missing or holds nothing of ours. A root that holds segments but no
	// marker is never adopted. Default false.
	Create bool
	// MaxObject is the largest object Get reads, in bytes. Default 1 GiB.
	MaxObject int64
	// Rand makes a new store's id. Default crypto/rand.
	Rand io.Reader
}

// Store is a folder store.
type Store struct {
	fs    FS
	root  string
	abs   string // root made absolute, for Locate
	maxOb int64
	rand  io.Reader

	mu    sync.Mutex
	id    string // the smallest valid marker id seen last
	pages listPages
}

// listPages keeps the rest of a listing that was cut to a page, so paging
// through a folder reads it once, not once a page. Only a continuation
// (the same prefix, after = the last name served, soon after) is served
// from it; names added meanwhile are found by the next listing, as with
// S3's pages.
type listPages struct {
	prefix string
	rest   []engine.BlobInfo
	last   string
	at     time.Time
}

const listPagesTTL = 10 * time.Second

var (
	_ engine.Blobs       = (*Store)(nil)
	_ engine.BlobDirs    = (*Store)(nil)
	_ engine.BlobStrays  = (*Store)(nil)
	_ engine.BlobStoreID = (*Store)(nil)
	_ engine.BlobWatcher = (*Store)(nil)

	_ engine.BlobMarkers      = (*Store)(nil)
	_ engine.BlobStrayRemover = (*Store)(nil)
	_ engine.BlobLocator      = (*Store)(nil)
)

type marker struct {
	Minca string `json:"minca"`
	V     int    `json:"v"`
	ID    string `json:"id"`
}

// Open opens the folder store at root.
func Open(root string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.FS == nil {
		o.FS = OSFS{}
	}
	if o.MaxObject <= 0 {
		o.MaxObject = 1 << 30
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	s := &Store{fs: o.FS, root: filepath.Clean(root), abs: Locate(root), maxOb: o.MaxObject, rand: o.Rand}
	ids, err := s.readIDs()
	if err == nil {
		s.id = ids[0]
		return s, nil
	}
	if !o.Create || !errors.Is(err, engine.ErrBlobStoreGone) {
		return nil, err
	}
	if err := s.create(); err != nil {
		return nil, err
	}
	return s, nil
}

// create makes the root and its marker, unless the root already holds
// directories or files of ours (then the marker was lost, and adopting the
// folder could hide that it was emptied or swapped).
func (s *Store) create() error {
	if _, err := s.fs.Stat(filepath.Dir(s.root)); err != nil {
		return engine.Errorf(engine.ErrBlobStoreGone, "the parent of %s is not there (unmounted?): %v", s.root, err)
	}
	if es, err := s.fs.ReadDir(s.root); err == nil {
		for _, e := range es {
			if engine.ValidBlobComponent(e.Name) {
				return engine.Errorf(engine.ErrBlobStoreGone, "%s holds %q but no marker; not adopting it", s.root, e.Name)
			}
		}
	}
	if err := s.fs.MkdirAll(s.root); err != nil {
		return fmt.Errorf("minca/folder: create %s: %w", s.root, err)
	}
	var b [10]byte
	if _, err := io.ReadFull(s.rand, b[:]); err != nil {
		return fmt.Errorf("minca/folder: store id: %w", err)
	}
	id := fmt.Sprintf("%x", b)
	data, _ := json.Marshal(marker{Minca: "blobs", V: 1, ID: id})
	if err := s.publish(MarkerName, data); err != nil && !errors.Is(err, engine.ErrBlobExists) {
		return fmt.Errorf("minca/folder: create marker: %w", err)
	}
	ids, err := s.readIDs() // another device may have made it first
	if err != nil {
		return err
	}
	s.id = ids[0]
	return nil
}

// StoreID is the store's id: the smallest valid id among the marker and
// its copies when they were read last (at Open, or by [Store.StoreIDs]).
func (s *Store) StoreID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Root is the folder's path.
func (s *Store) Root() string { return s.root }

// Locate implements [engine.BlobLocator]: the folder's absolute path.
func (s *Store) Locate() string { return s.abs }

// Locate is where the folder store at root is, as [Store.Locate] says,
// without opening it: root made absolute and clean.
func Locate(root string) string {
	if a, err := filepath.Abs(root); err == nil {
		return a
	}
	return filepath.Clean(root)
}

// check fails when the marker is gone: the folder was removed, emptied or
// unmounted since Open. A copy of the marker alone still counts (a sync
// service renamed the marker and has not yet brought the other).
func (s *Store) check(op, name string) error {
	_, err := s.fs.Stat(filepath.Join(s.root, MarkerName))
	if errors.Is(err, fs.ErrNotExist) {
		if _, rerr := s.readIDs(); rerr == nil {
			return nil
		}
		return &engine.BlobError{Op: op, Name: name, Err: engine.Errorf(engine.ErrBlobStoreGone, "%s vanished from %s", MarkerName, s.root)}
	}
	if err != nil {
		return &engine.BlobError{Op: op, Name: name, Err: err}
	}
	return nil
}

// List implements [engine.Blobs].
func (s *Store) List(ctx context.Context, prefix, after string, limit int) ([]engine.BlobInfo, error) {
	if err := s.check("list", prefix); err != nil {
		return nil, err
	}
	if after != "" && limit > 0 {
		s.mu.Lock()
		p := &s.pages
		if p.prefix == prefix && p.last == after && len(p.rest) > 0 && time.Since(p.at) < listPagesTTL {
			page := append([]engine.BlobInfo(nil), p.rest[:min(limit, len(p.rest))]...)
			p.rest = p.rest[len(page):]
			p.last = page[len(page)-1].Name
			if len(p.rest) == 0 {
				s.pages = listPages{} // the listing is done; the next one reads the folder
			}
			s.mu.Unlock()
			return page, nil
		}
		s.mu.Unlock()
	}
	var out []engine.BlobInfo
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
		if !engine.ValidBlobName(dir) {
			return nil, nil
		}
	}
	// Directories whose every name sorts at or before after, or outside
	// prefix, are not read: paging through a writer's segments reads only
	// the directories from the bound on.
	skip := func(d string) bool {
		p := d + "/"
		if !strings.HasPrefix(p, prefix) && !strings.HasPrefix(prefix, p) {
			return true
		}
		return after != "" && p < after && !strings.HasPrefix(after, p)
	}
	err := s.walkSkip(ctx, dir, skip, func(name string, e Entry, pending bool) {
		if strings.HasPrefix(name, prefix) && name > after && name != MarkerName {
			out = append(out, engine.BlobInfo{Name: name, Size: e.Size, ModTime: e.ModTime, Pending: pending || e.Dataless})
		}
	}, nil)
	if err != nil {
		return nil, &engine.BlobError{Op: "list", Name: prefix, Err: err}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	// Two entries of one name: a placeholder and the file it became.
	out = dedupe(out)
	if limit > 0 && len(out) > limit {
		s.mu.Lock()
		s.pages = listPages{prefix: prefix, rest: out[limit:], last: out[limit-1].Name, at: time.Now()}
		s.mu.Unlock()
		out = out[:limit:limit]
	}
	return out, nil
}

func dedupe(in []engine.BlobInfo) []engine.BlobInfo {
	out := in[:0]
	for _, b := range in {
		if n := len(out); n > 0 && out[n-1].Name == b.Name {
			if out[n-1].Pending {
				out[n-1] = b
			}
			continue
		}
		out = append(out, b)
	}
	return out
}

// walk visits the files under dir (a valid name or ""): ours go to fn, and
// others (not temp names) to stray when it is not nil. A directory gone
// while walking is skipped (a reader carries on, F8).
func (s *Store) walk(ctx context.Context, dir string, fn func(name string, e Entry, pending bool), stray func(name string, e Entry)) error {
	return s.walkSkip(ctx, dir, func(string) bool { return false }, fn, stray)
}

func (s *Store) walkSkip(ctx context.Context, dir string, skip func(dir string) bool, fn func(name string, e Entry, pending bool), stray func(name string, e Entry)) error {
	es, err := s.fs.ReadDir(join(s.root, dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range es {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name
		if dir != "" {
			name = dir + "/" + e.Name
		}
		switch {
		case e.Dir && engine.ValidBlobComponent(e.Name):
			if skip(name) {
				continue
			}
			if err := s.walkSkip(ctx, name, skip, fn, stray); err != nil {
				return err
			}
		case e.Dir:
			if stray != nil && !isTempName(e.Name) {
				// iCloud's "segments 2": salvage may look inside.
				if err := s.walkStray(ctx, name, stray); err != nil {
					return err
				}
			}
		case engine.ValidBlobComponent(e.Name):
			fn(name, e, false)
		case isPlaceholder(e.Name):
			real := e.Name[1 : len(e.Name)-len(".icloud")]
			if dir != "" {
				real = dir + "/" + real
			}
			fn(real, Entry{Name: real}, true)
		case stray != nil && !isTempName(e.Name):
			stray(name, e)
		}
	}
	return nil
}

func (s *Store) walkStray(ctx context.Context, dir string, stray func(string, Entry)) error {
	es, err := s.fs.ReadDir(join(s.root, dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range es {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := dir + "/" + e.Name
		switch {
		case isTempName(e.Name):
		case e.Dir:
			if err := s.walkStray(ctx, name, stray); err != nil {
				return err
			}
		default:
			stray(name, e)
		}
	}
	return nil
}

// isPlaceholder: iCloud's pre-Sonoma ".name.icloud" stub of an evicted file
// (F3) whose real name is ours.
func isPlaceholder(n string) bool {
	if !strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".icloud") || len(n) <= len("..icloud") {
		return false
	}
	return engine.ValidBlobComponent(n[1 : len(n)-len(".icloud")])
}

// Dirs implements [engine.BlobDirs].
func (s *Store) Dirs(ctx context.Context, prefix string) ([]string, error) {
	if err := s.check("list", prefix); err != nil {
		return nil, err
	}
	dir := strings.TrimSuffix(prefix, "/")
	if prefix != "" && (!strings.HasSuffix(prefix, "/") || !engine.ValidBlobName(dir)) {
		return nil, &engine.BlobError{Op: "list", Name: prefix, Err: engine.ErrBlobName}
	}
	es, err := s.fs.ReadDir(join(s.root, dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, &engine.BlobError{Op: "list", Name: prefix, Err: err}
	}
	var out []string
	for _, e := range es {
		if e.Dir && engine.ValidBlobComponent(e.Name) {
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Strays implements [engine.BlobStrays]: files under prefix's directory
// whose names are outside the grammar and not temp files.
func (s *Store) Strays(ctx context.Context, prefix string) ([]engine.BlobInfo, error) {
	if err := s.check("list", prefix); err != nil {
		return nil, err
	}
	var out []engine.BlobInfo
	err := s.walk(ctx, "", func(string, Entry, bool) {}, func(name string, e Entry) {
		if strings.HasPrefix(name, prefix) || prefix == "" {
			out = append(out, engine.BlobInfo{Name: name, Size: e.Size, ModTime: e.ModTime, Pending: e.Dataless})
		}
	})
	if err != nil {
		return nil, &engine.BlobError{Op: "list", Name: prefix, Err: err}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// readable reports whether Get may read name: ours, or a stray a salvage
// listed (any relative path without "..").
func readable(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return false
		}
	}
	return true
}

// Get implements [engine.Blobs].
func (s *Store) Get(ctx context.Context, name string) ([]byte, error) {
	if !readable(name) {
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobName}
	}
	if err := s.check("get", name); err != nil {
		return nil, err
	}
	p := join(s.root, name)
	e, err := s.fs.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, perr := s.fs.Stat(filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".icloud")); perr == nil {
			return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobUnavailable}
		}
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobNotFound}
	case err != nil:
		return nil, &engine.BlobError{Op: "get", Name: name, Err: err}
	case e.Dir:
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobNotFound}
	case e.Dataless:
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobUnavailable}
	case e.Size > s.maxOb:
		return nil, &engine.BlobError{Op: "get", Name: name, Err: fmt.Errorf("%d bytes is over the limit of %d", e.Size, s.maxOb)}
	}
	b, err := s.fs.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobNotFound}
	case notYet(err):
		return nil, &engine.BlobError{Op: "get", Name: name, Err: fmt.Errorf("%w: %v", engine.ErrBlobUnavailable, err)}
	case err != nil:
		return nil, &engine.BlobError{Op: "get", Name: name, Err: err}
	case int64(len(b)) > s.maxOb:
		return nil, &engine.BlobError{Op: "get", Name: name, Err: fmt.Errorf("over the limit of %d bytes", s.maxOb)}
	}
	return b, nil
}

// Put implements [engine.Blobs].
func (s *Store) Put(ctx context.Context, name string, data []byte) error {
	if !engine.ValidBlobName(name) || name == MarkerName {
		return &engine.BlobError{Op: "put", Name: name, Err: engine.ErrBlobName}
	}
	if err := s.check("put", name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.publish(name, data); err != nil {
		return &engine.BlobError{Op: "put", Name: name, Err: err}
	}
	return nil
}

// publish writes a file atomically: temp (outside the grammar) → fsync →
// rename → fsync dir. The rename is the commit point.
func (s *Store) publish(name string, data []byte) error {
	final := join(s.root, name)
	dir := filepath.Dir(final)
	if _, err := s.fs.Stat(dir); err != nil {
		if err := s.fs.MkdirAll(dir); err != nil {
			return err
		}
		if err := s.fs.SyncDir(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	if _, err := s.fs.Stat(final); err == nil {
		return engine.ErrBlobExists
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var rb [8]byte
	if _, err := rand.Read(rb[:]); err != nil {
		return err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".minca-%x.tmp", rb))
	f, err := s.fs.Create(tmp)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = s.fs.Remove(tmp)
		return werr
	}
	// Checked again: another process of this writer may have published it
	// meanwhile, and rename would replace it silently.
	if _, err := s.fs.Stat(final); err == nil {
		_ = s.fs.Remove(tmp)
		return engine.ErrBlobExists
	}
	if err := s.fs.Rename(tmp, final); err != nil {
		_ = s.fs.Remove(tmp)
		return err
	}
	return s.fs.SyncDir(dir)
}

// Delete implements [engine.Blobs].
func (s *Store) Delete(ctx context.Context, name string) error {
	if !engine.ValidBlobName(name) || name == MarkerName {
		return &engine.BlobError{Op: "delete", Name: name, Err: engine.ErrBlobName}
	}
	if err := s.check("delete", name); err != nil {
		return err
	}
	p := join(s.root, name)
	if err := s.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &engine.BlobError{Op: "delete", Name: name, Err: err}
	}
	// An evicted file is its iCloud stub (F3): deleting it deletes that.
	stub := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".icloud")
	if err := s.fs.Remove(stub); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &engine.BlobError{Op: "delete", Name: name, Err: err}
	}
	return s.fs.SyncDir(filepath.Dir(p))
}
