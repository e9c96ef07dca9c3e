package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/store"
)

// Each local scheme: created only when asked, found again, read-only
// honoured, Flush a no-op, Close idempotent.
func TestLocalSchemes(t *testing.T) {
	vs := versions(t, "local", 40, 1)
	for _, scheme := range []string{"pebble:", "sqlite:", ""} {
		t.Run("scheme="+scheme, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			url := scheme + path

			// Must exist: nothing there, nothing made.
			_, err := store.Open(ctx, url, judged("", nil))
			wantNoStore(t, err, url)
			missing(t, path)
			_, err = store.Open(ctx, url, judged("", func(o *store.Options) { o.ReadOnly = true }))
			wantNoStore(t, err, url)
			missing(t, path)

			st := open(t, url, judged("", func(o *store.Options) { o.Create = true }))
			admit(t, st, vs)
			if err := st.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if st.Blobs() != nil || st.Mirror() != nil || st.URL() != url {
				t.Fatalf("a local store has blobs %v, mirror %v, url %q", st.Blobs(), st.Mirror(), st.URL())
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}

			st = open(t, url, judged("", nil))
			if n := holds(t, st, vs); n != len(vs) {
				t.Fatalf("reopened: %d of %d versions", n, len(vs))
			}
			st.Close()
		})
	}
}

// A store opened read-only reads, refuses writes with ErrReadOnly, and
// leaves every file of the store as it was: no lock file, no log.
func TestLocalReadOnly(t *testing.T) {
	vs := versions(t, "readonly", 40, 2)
	for _, scheme := range []string{"pebble:", "sqlite:"} {
		t.Run("scheme="+scheme, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "db")
			url := scheme + path
			st := open(t, url, judged("", func(o *store.Options) { o.Create = true }))
			admit(t, st, vs[:30])
			st.Close()
			before := tree(t, dir)

			ro := open(t, url, judged("", func(o *store.Options) { o.ReadOnly = true }))
			if n := holds(t, ro, vs[:30]); n != 30 {
				t.Fatalf("read-only: %d of 30 versions", n)
			}
			if _, err := ro.Engine().Admit(ctx, "test", vs[30:]); !errors.Is(err, engine.ErrReadOnly) {
				t.Fatalf("admit into a read-only store: %v", err)
			}
			if err := ro.Engine().SetMeta(ctx, "x", []byte("y")); !errors.Is(err, engine.ErrReadOnly) {
				t.Fatalf("meta into a read-only store: %v", err)
			}
			if err := ro.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ro.Close(); err != nil {
				t.Fatal(err)
			}
			if after := tree(t, dir); after != before {
				t.Fatalf("a read-only open changed the store:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// An existing but empty directory or file is not a store either.
func TestLocalEmptyIsNoStore(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, "pebble:"+empty, judged("", nil))
	if err == nil {
		st.Close()
	}
	wantNoStore(t, err, "pebble:"+empty)
	if es, _ := os.ReadDir(empty); len(es) != 0 {
		t.Fatalf("a must-exist open wrote %d entries into an empty directory", len(es))
	}
}

// memory: is a new, empty store each time; read-only refuses writes.
func TestMemory(t *testing.T) {
	vs := versions(t, "memory", 10, 3)
	st := open(t, "memory:", judged("", nil))
	admit(t, st, vs)
	st.Close()
	ro := open(t, "memory:", judged("", func(o *store.Options) { o.ReadOnly = true }))
	defer ro.Close()
	if n := holds(t, ro, vs); n != 0 {
		t.Fatalf("a new memory store holds %d versions", n)
	}
	if _, err := ro.Engine().Admit(ctx, "test", vs); !errors.Is(err, engine.ErrReadOnly) {
		t.Fatalf("admit into a read-only memory store: %v", err)
	}
}

func TestBadURLs(t *testing.T) {
	for _, url := range []string{"", "nosuch://x", "pebble:", "sqlite:", "folder:", "memory:x", "s3://", "s3://bkt/Bad_Prefix", "s3://bkt/p?nope=1", "db:x"} {
		if _, err := store.Open(ctx, url, judged("", func(o *store.Options) { o.Create = true })); !errors.Is(err, store.ErrBadURL) {
			t.Errorf("Open(%q): %v, want ErrBadURL", url, err)
		}
	}
	for _, url := range []string{"", "pebble:x", "memory:", "x/y", "nosuch://x"} {
		if _, err := store.OpenBlobs(ctx, url, &store.Options{Create: true}); !errors.Is(err, store.ErrBadURL) {
			t.Errorf("OpenBlobs(%q): %v, want ErrBadURL", url, err)
		}
	}
	// A bare path with a colon further on is a Pebble path, not a scheme.
	dir := t.TempDir()
	for _, p := range []string{"Db:x", "a/b:c", "./x:y"} {
		st, err := store.Open(ctx, filepath.Join(dir, p), judged("", func(o *store.Options) { o.Create = true }))
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		st.Close()
	}
}

func TestOptionsValidate(t *testing.T) {
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	if _, err := store.Open(ctx, url, &store.Options{Create: true, ReadOnly: true}); err == nil {
		t.Fatal("Create and ReadOnly together were accepted")
	}
	missing(t, url[len("pebble:"):])
	if _, err := store.Open(ctx, url, nil); !errors.Is(err, engine.ErrNoStore) {
		t.Fatalf("nil options do not create: %v", err)
	}
}
