package store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/internal/corpus"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/store"
)

var ctx = context.Background()

// versions signs n versions of one space.
func versions(t *testing.T, name string, n int, seed uint64) []*record.Version {
	t.Helper()
	var vs []*record.Version
	err := corpus.Generate(corpus.SpaceID(name), corpus.Options{Versions: n, Seed: seed}, func(v *record.Version) error {
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// judged are Options with the suite's judge and the given changes.
func judged(cache string, f func(*store.Options)) *store.Options {
	o := &store.Options{Judge: enginetest.Judge{}, CacheDir: cache}
	if f != nil {
		f(o)
	}
	return o
}

func open(t *testing.T, url string, o *store.Options) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, url, o)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return st
}

func admit(t *testing.T, st *store.Store, vs []*record.Version) {
	t.Helper()
	outs, err := st.Engine().Admit(ctx, "test", vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Verdict == engine.Refused {
			t.Fatalf("refused: %+v", o.Refusal)
		}
	}
}

// holds reports how many of vs the store holds.
func holds(t *testing.T, st *store.Store, vs []*record.Version) int {
	t.Helper()
	n := 0
	for _, v := range vs {
		_, err := st.Engine().VersionJSON(ctx, enginetest.Digest(v))
		switch {
		case err == nil:
			n++
		case !errors.Is(err, engine.ErrNotFound):
			t.Fatal(err)
		}
	}
	return n
}

// wantNoStore checks a must-exist open of a missing store: an error
// wrapping engine.ErrNoStore whose text is "no store at URL".
func wantNoStore(t *testing.T, err error, url string) {
	t.Helper()
	if !errors.Is(err, engine.ErrNoStore) {
		t.Fatalf("open %s: %v, want engine.ErrNoStore", url, err)
	}
	if !strings.HasPrefix(err.Error(), "no store at "+url) {
		t.Fatalf("open %s: text %q", url, err)
	}
}

// tree is every file and directory under root with its size and mtime,
// for checking that something was not written.
func tree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		lines = append(lines, rel+" "+fi.Mode().String()+" "+strconv.FormatInt(fi.Size(), 10)+" "+fi.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// missing fails unless path does not exist.
func missing(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists (%v): a store was made", path, err)
	}
}
