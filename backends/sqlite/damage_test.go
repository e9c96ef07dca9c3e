package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/internal/localtest"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// A store to damage: its database file, the file's page size and the kv
// table's root page, and the store's first and last keys.
type damaged struct {
	path        string
	pageSize    int64
	root        int64
	first, last []byte
}

func newDamaged(t *testing.T) *damaged {
	t.Helper()
	d := &damaged{path: filepath.Join(t.TempDir(), "store.db")}
	fill(t, d.path, nil)
	db, err := sql.Open("sqlite", "file:"+d.path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&d.pageSize); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = 'kv'`).Scan(&d.root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT min(k), max(k) FROM kv`).Scan(&d.first, &d.last); err != nil {
		t.Fatal(err)
	}
	return d
}

// garble overwrites the header of page n (from 1) with bytes no b-tree
// page starts with.
func (d *damaged) garble(t *testing.T, n int64) {
	t.Helper()
	f, err := os.OpenFile(d.path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 8), (n-1)*d.pageSize); err != nil {
		t.Fatal(err)
	}
}

// leafOf is the page holding key in a leaf cell (an index b-tree leaf,
// type 0x0a; the key may also stand in an interior page).
func (d *damaged) leafOf(t *testing.T, key []byte) int64 {
	t.Helper()
	b, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; ; {
		i := bytes.Index(b[off:], key)
		if i < 0 {
			t.Fatalf("key %x is in no leaf page", key)
		}
		off += i
		if page := int64(off) / d.pageSize; b[page*d.pageSize] == 0x0a {
			return page + 1
		}
		off++
	}
}

func wantCorrupt(t *testing.T, what string, err error, names ...string) {
	t.Helper()
	if !errors.Is(err, engine.ErrCorrupt) {
		t.Fatalf("%s: %v, want ErrCorrupt", what, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Fatalf("%s: the error is not one line: %q", what, msg)
	}
	for _, n := range names {
		if !strings.Contains(msg, n) {
			t.Fatalf("%s: the error does not name %q: %s", what, n, msg)
		}
	}
}

var modes = []struct {
	name string
	opts *sqlite.Options
}{{"write", nil}, {"read-only", &sqlite.Options{ReadOnly: true}}}

// A damaged leaf page: the store opens, and reading that page — a Get of a
// key on it, an iteration, the engine's Check (SQLite's integrity check)
// — reports it, naming the store; other pages stay readable.
func TestDamagedPage(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			d := newDamaged(t)
			d.garble(t, d.leafOf(t, d.last))
			kv, err := sqlite.Open(d.path, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Get(d.first); err != nil {
				t.Fatal("a key on an undamaged page:", err)
			}
			_, err = kv.Get(d.last)
			wantCorrupt(t, "get", err, d.path, "malformed")
			it, err := kv.NewIter(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
			}
			wantCorrupt(t, "iterate", it.Err(), d.path, "malformed")
			it.Close()
			err = kv.GetMany([][]byte{d.first, d.last}, func(int, []byte) {})
			wantCorrupt(t, "get many", err, d.path, "malformed")
			st, err := engine.Open(kv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			probs, err := st.Check(context.Background(), nil)
			if err != nil || len(probs) == 0 {
				t.Fatalf("check: %v, %d problems", err, len(probs))
			}
			for _, p := range probs {
				if !strings.Contains(p, ": damaged: ") || !strings.Contains(p, d.path) || strings.Contains(p, "\n") {
					t.Fatalf("check: %q", p)
				}
			}
		})
	}
}

// The kv table's root page damaged, or the file cut to half its length:
// every read reports it, naming the store.
func TestDamagedFile(t *testing.T) {
	for _, m := range modes {
		for _, c := range []struct {
			name   string
			damage func(*damaged)
		}{
			{"root page", func(d *damaged) { d.garble(t, d.root) }},
			{"cut short", func(d *damaged) { cut(t, d.path) }},
		} {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				d := newDamaged(t)
				c.damage(d)
				kv, err := sqlite.Open(d.path, m.opts)
				if err != nil {
					wantCorrupt(t, "open", err, d.path)
					return
				}
				defer kv.Close()
				_, err = kv.Get(d.last)
				wantCorrupt(t, "get", err, d.path)
				it, err := kv.NewIter(nil, nil)
				if err == nil {
					for it.Next() {
					}
					err = it.Err()
					it.Close()
				}
				wantCorrupt(t, "iterate", err, d.path)
				_, err = engine.Open(kv, nil)
				wantCorrupt(t, "the engine's open", err, d.path)
			})
		}
	}
}

func cut(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// The minca command on a damaged store: every verb that reads says so on
// one line naming the store and exits 1, store check as a problem line;
// never a stack trace.
func TestDamageOnTheCommandLine(t *testing.T) {
	bin := localtest.Minca(t)
	space := enginetest.SpaceID("localtest")
	for name, damage := range map[string]func(*damaged){
		"root page": func(d *damaged) { d.garble(t, d.root) },
		"cut short": func(d *damaged) { cut(t, d.path) },
	} {
		t.Run(name, func(t *testing.T) {
			d := newDamaged(t)
			damage(d)
			localtest.DamageReported(t, bin, "sqlite:"+d.path, space, "somekey", d.path)
		})
	}
}
