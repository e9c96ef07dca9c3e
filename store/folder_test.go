package store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/store"
)

// segments lists the segment files under a folder store.
func segments(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(root, "segments"), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".seg") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// folder:PATH: made only when asked; what was taken in reaches the folder
// by Flush and only by Flush; another device (another cache) reads it.
func TestFolderStore(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "synced")
	url := "folder:" + root
	cache1, cache2 := filepath.Join(dir, "cache1"), filepath.Join(dir, "cache2")
	vs := versions(t, "folder", 60, 4)

	_, err := store.Open(ctx, url, judged(cache1, nil))
	wantNoStore(t, err, url)
	missing(t, root)
	missing(t, cache1)
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(ctx, url, judged(cache1, func(o *store.Options) { o.ReadOnly = true }))
	wantNoStore(t, err, url)
	if es, _ := os.ReadDir(root); len(es) != 0 {
		t.Fatalf("a must-exist open wrote into an empty folder: %v", es)
	}
	missing(t, cache1)
	if _, err := store.Open(ctx, url, &store.Options{Create: true, CacheDir: cache1}); err == nil {
		t.Fatal("a folder store opened without a judge")
	}

	st := open(t, url, judged(cache1, func(o *store.Options) { o.Create = true }))
	if st.Blobs() == nil || st.Mirror() == nil {
		t.Fatal("a folder store has no blob store or mirror")
	}
	admit(t, st, vs[:40])
	// Close does not export: nothing reaches the folder without Flush.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if segs := segments(t, root); len(segs) != 0 {
		t.Fatalf("Close exported: %v", segs)
	}
	// The next Flush exports what an earlier run left in the index.
	st = open(t, url, judged(cache1, nil))
	admit(t, st, vs[40:])
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(segments(t, root)) == 0 {
		t.Fatal("Flush wrote no segment")
	}
	st.Close()

	other := open(t, url, judged(cache2, nil))
	defer other.Close()
	if n := holds(t, other, vs); n != len(vs) {
		t.Fatalf("another device reads %d of %d versions", n, len(vs))
	}
}

// A folder store opened read-only brings its index up to date, refuses
// writes, and writes nothing to the folder.
func TestFolderReadOnly(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "synced")
	url := "folder:" + root
	vs := versions(t, "folder ro", 40, 5)
	st := open(t, url, judged(filepath.Join(dir, "cache1"), func(o *store.Options) { o.Create = true }))
	admit(t, st, vs[:30])
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before := tree(t, root)

	ro := open(t, url, judged(filepath.Join(dir, "cache2"), func(o *store.Options) { o.ReadOnly = true }))
	if n := holds(t, ro, vs[:30]); n != 30 {
		t.Fatalf("read-only: %d of 30 versions", n)
	}
	if ro.Mirror() != nil {
		t.Fatal("a read-only store offers a mirror that could write")
	}
	if _, err := ro.Engine().Admit(ctx, "test", vs[30:]); !errors.Is(err, engine.ErrReadOnly) {
		t.Fatalf("admit into a read-only folder store: %v", err)
	}
	if err := ro.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := tree(t, root); after != before {
		t.Fatalf("a read-only open wrote to the folder:\nbefore\n%s\nafter\n%s", before, after)
	}
	// Its index, a cache, was brought up to date and is reused.
	again := open(t, url, judged(filepath.Join(dir, "cache2"), func(o *store.Options) { o.ReadOnly = true }))
	defer again.Close()
	if n := holds(t, again, vs[:30]); n != 30 {
		t.Fatalf("read-only again: %d of 30 versions", n)
	}
}

// Ctrl-C during an open (the import) or a Flush (the export) of a folder
// store: it returns at once with ctx's error, and nothing is lost.
func TestFolderCancel(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "synced")
	url := "folder:" + root
	vs := versions(t, "folder cancel", 90, 6)
	st := open(t, url, judged(filepath.Join(dir, "cache1"), func(o *store.Options) { o.Create = true }))
	for i := 0; i < len(vs); i += 30 { // three segments
		admit(t, st, vs[i:i+30])
		if err := st.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(segments(t, root)); n != 3 {
		t.Fatalf("%d segments, want 3", n)
	}

	// A flush with ctx ended writes nothing; a later one writes it.
	more := versions(t, "folder cancel more", 10, 7)
	admit(t, st, more)
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := st.Flush(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("flush with ctx cancelled: %v", err)
	}
	if n := len(segments(t, root)); n != 3 {
		t.Fatalf("a cancelled flush wrote: %d segments", n)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(segments(t, root)); n != 4 {
		t.Fatalf("%d segments after the flush, want 4", n)
	}
	st.Close()

	// Cancelled after the first segment read, an open stops there.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var read int64
	start := time.Now()
	_, err := store.Open(cctx, url, judged(filepath.Join(dir, "cache2"), func(o *store.Options) {
		o.Progress = func(s mirror.Stats) {
			read = s.SegmentsRead
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("open cancelled during the import: %v", err)
	}
	if read == 0 || read >= 4 || time.Since(start) > 5*time.Second {
		t.Fatalf("the cancelled open read %d segments in %v", read, time.Since(start))
	}
	// Already cancelled: nothing is opened.
	if _, err := store.Open(cctx, url, judged(filepath.Join(dir, "cache3"), nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("open with ctx cancelled: %v", err)
	}
	missing(t, filepath.Join(dir, "cache3"))
	// What the cancelled open did not read, the next one does.
	st = open(t, url, judged(filepath.Join(dir, "cache2"), nil))
	defer st.Close()
	if n := holds(t, st, append(vs, more...)); n != len(vs)+len(more) {
		t.Fatalf("after a cancelled open: %d of %d versions", n, len(vs)+len(more))
	}
}

// OpenBlobs: a missing folder is no store, made only when asked; one
// holding segments but no marker is never adopted.
func TestOpenBlobsFolder(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "b")
	url := "folder:" + root
	_, err := store.OpenBlobs(ctx, url, nil)
	wantNoStore(t, err, url)
	missing(t, root)
	b, err := store.OpenBlobs(ctx, url, &store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "segments/w/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenBlobs(ctx, url, nil); err != nil {
		t.Fatalf("an existing blob store: %v", err)
	}
	if err := os.Remove(filepath.Join(root, "minca-store.json")); err != nil {
		t.Fatal(err)
	}
	for _, create := range []bool{false, true} {
		_, err := store.OpenBlobs(ctx, url, &store.Options{Create: create})
		if !errors.Is(err, engine.ErrBlobStoreGone) || errors.Is(err, engine.ErrNoStore) {
			t.Fatalf("create %v: a folder with segments and no marker: %v", create, err)
		}
	}
}

// OpenBlobsFor (case 7, F10): where a store remembers a blob store and the
// folder is emptied or removed, a create is refused naming the id it held,
// and nothing is made there; with Adopt it is set up anew. A folder the
// store never mirrored to is set up without ceremony.
func TestOpenBlobsForRemembered(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "b")
	url := "folder:" + root
	st := open(t, "memory:", judged("", nil))
	defer st.Close()
	admit(t, st, versions(t, "remembered", 10, 12))
	create := &store.Options{Create: true}
	b, err := store.OpenBlobsFor(ctx, st.Engine(), url, create)
	if err != nil {
		t.Fatal(err)
	}
	was := b.(engine.BlobStoreID).StoreID()
	m, err := mirror.New(st.Engine(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Export(ctx); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, err := store.OpenBlobsFor(ctx, st.Engine(), url, create); err != nil {
		t.Fatalf("the folder it remembers: %v", err)
	}

	for _, emptied := range []bool{false, true} {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		if emptied {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		_, err := store.OpenBlobsFor(ctx, st.Engine(), url, create)
		var ce *mirror.StoreChangedError
		if !errors.As(err, &ce) || ce.Remembered != was || ce.Found != "" || ce.Location != root || !strings.Contains(err.Error(), was) {
			t.Fatalf("emptied %v: %v", emptied, err)
		}
		if emptied {
			if es, _ := os.ReadDir(root); len(es) != 0 {
				t.Fatalf("a refused open wrote %v", es)
			}
		} else {
			missing(t, root)
		}
	}
	// Without Create it is what it is: no store.
	_, err = store.OpenBlobsFor(ctx, st.Engine(), url, nil)
	wantNoStore(t, err, url)
	// Another store that never mirrored there, and Adopt, set it up.
	other := open(t, "memory:", judged("", nil))
	defer other.Close()
	if _, err := store.OpenBlobsFor(ctx, other.Engine(), "folder:"+filepath.Join(dir, "c"), create); err != nil {
		t.Fatalf("a new folder: %v", err)
	}
	b, err = store.OpenBlobsFor(ctx, st.Engine(), url, &store.Options{Create: true, Adopt: true})
	if err != nil {
		t.Fatalf("adopt: %v", err)
	}
	if b.(engine.BlobStoreID).StoreID() == was {
		t.Fatal("the same id twice")
	}
}

// Case 7 through a folder: store: its index is kept by the folder's
// location, so a folder emptied or removed is refused by an open that
// would create it, before a new marker is made, and another store put
// there is refused by the mirror, naming both; Adopt takes it and exports
// everything there again.
func TestFolderStoreRemembers(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "synced")
	url := "folder:" + root
	cache := filepath.Join(dir, "cache1")
	create := func(o *store.Options) { o.Create = true }
	vs := versions(t, "folder remembers", 30, 13)
	st := open(t, url, judged(cache, create))
	admit(t, st, vs[:20])
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	was := st.Blobs().(engine.BlobStoreID).StoreID()
	st.Close()

	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(ctx, url, judged(cache, create))
	var ce *mirror.StoreChangedError
	if !errors.As(err, &ce) || ce.Remembered != was || ce.Found != "" || !strings.Contains(err.Error(), was) {
		t.Fatalf("create on an emptied folder: %v", err)
	}
	if es, _ := os.ReadDir(root); len(es) != 0 {
		t.Fatalf("a refused open wrote %v", es)
	}
	_, err = store.Open(ctx, url, judged(cache, func(o *store.Options) { o.ReadOnly = true }))
	wantNoStore(t, err, url)

	// Another device sets up a new store there: refused, naming both.
	st2 := open(t, url, judged(filepath.Join(dir, "cache2"), create))
	admit(t, st2, vs[20:])
	if err := st2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	now := st2.Blobs().(engine.BlobStoreID).StoreID()
	st2.Close()
	for _, f := range []func(*store.Options){create, nil, func(o *store.Options) { o.ReadOnly = true }} {
		_, err = store.Open(ctx, url, judged(cache, f))
		if !errors.As(err, &ce) || ce.Remembered != was || ce.Found != now || ce.Empty {
			t.Fatalf("a store replaced by another: %v", err)
		}
	}

	// Adopted: what this device held goes there again, beside the other's.
	st = open(t, url, judged(cache, func(o *store.Options) { o.Adopt = true }))
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := holds(t, st, vs); n != len(vs) {
		t.Fatalf("adopted: %d of %d versions", n, len(vs))
	}
	st.Close()
	other := open(t, url, judged(filepath.Join(dir, "cache3"), nil))
	defer other.Close()
	if n := holds(t, other, vs); n != len(vs) {
		t.Fatalf("a third device reads %d of %d versions", n, len(vs))
	}
}

// An index kept by the blob store's id (as made before indexes were kept
// by location) is moved into place, with what it held that no Flush had
// exported.
func TestOldIndexMoved(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "synced")
	url := "folder:" + root
	cache := filepath.Join(dir, "cache")
	vs := versions(t, "old index", 20, 14)
	st := open(t, url, judged(cache, func(o *store.Options) { o.Create = true }))
	admit(t, st, vs)
	id := st.Blobs().(engine.BlobStoreID).StoreID()
	st.Close() // not flushed: the versions are in the index alone
	es, err := os.ReadDir(cache)
	if err != nil || len(es) != 1 {
		t.Fatalf("cache %v %v", es, err)
	}
	if err := os.Rename(filepath.Join(cache, es[0].Name()), filepath.Join(cache, "index-"+id)); err != nil {
		t.Fatal(err)
	}
	st = open(t, url, judged(cache, nil))
	if n := holds(t, st, vs); n != len(vs) {
		t.Fatalf("the old index: %d of %d versions", n, len(vs))
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	missing(t, filepath.Join(cache, "index-"+id))
	other := open(t, url, judged(filepath.Join(dir, "cache2"), nil))
	defer other.Close()
	if n := holds(t, other, vs); n != len(vs) {
		t.Fatalf("flushed from the old index: %d of %d versions", n, len(vs))
	}
}

// A folder store with a bad segment opens with everything else, and
// Damage names the segment; without one, Damage is nil.
func TestFolderStoreDamage(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "synced")
	url := "folder:" + root
	vs := versions(t, "folder damage", 40, 15)
	st := open(t, url, judged(filepath.Join(dir, "cache1"), func(o *store.Options) { o.Create = true }))
	for _, part := range [][]*record.Version{vs[:20], vs[20:]} {
		admit(t, st, part)
		if err := st.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st.Damage() != nil {
		t.Fatalf("damage: %v", st.Damage())
	}
	st.Close()
	segs := segments(t, root)
	sort.Strings(segs)
	data, err := os.ReadFile(segs[1])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(segs[1], data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		st := open(t, url, judged(t.TempDir(), func(o *store.Options) { o.ReadOnly = ro }))
		var bad *mirror.BadSegmentsError
		if err := st.Damage(); !errors.As(err, &bad) || len(bad.Segments) != 1 || !strings.HasSuffix(segs[1], filepath.FromSlash(bad.Segments[0].Name)) || bad.Segments[0].Versions != 20 {
			t.Fatalf("read-only %v: damage %v", ro, err)
		}
		if n := holds(t, st, vs[:20]); n != 20 {
			t.Fatalf("read-only %v: %d of the 20 versions in the good segment", ro, n)
		}
		st.Close()
	}
}
