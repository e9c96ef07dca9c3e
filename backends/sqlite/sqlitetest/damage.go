// Package sqlitetest makes SQLite stores and damages them, for the tests
// of the backend and of the command line, which must report the damage
// on one line naming the store.
package sqlitetest

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/backends/internal/localtest"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// Fill writes localtest's corpus into a new store at path, calling during
// (if not nil) while the store is still open, and returns the versions.
func Fill(t *testing.T, path string, during func()) []*record.Version {
	t.Helper()
	kv, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return localtest.Fill(t, kv, func(engine.KV) {
		if during != nil {
			during()
		}
	})
}

// Damaged is a store to damage: its database file, the file's page size,
// the table of its rows and that table's root page, and the store's first
// and last keys (the engine's).
type Damaged struct {
	Path        string
	PageSize    int64
	Table       string
	Root        int64
	First, Last []byte
}

// RowsTable is the table of a store's rows: kvu (a store made now), kvt (only versions in blocks), kvs (values coded with a dictionary, no blocks), kvl
// (keys labelled, values Huffman-coded alone), or kv in a store made
// before labels.
func RowsTable(t *testing.T, db *sql.DB) string {
	t.Helper()
	var name string
	if err := db.QueryRow(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN ('kv', 'kvl', 'kvs', 'kvt', 'kvu') ORDER BY name DESC LIMIT 1`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

// NewDamaged fills a store in a new directory, for a test to damage.
func NewDamaged(t *testing.T) *Damaged {
	t.Helper()
	d := &Damaged{Path: filepath.Join(t.TempDir(), "store.db")}
	Fill(t, d.Path, nil)
	db, err := sql.Open("sqlite", "file:"+d.Path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&d.PageSize); err != nil {
		t.Fatal(err)
	}
	d.Table = RowsTable(t, db)
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = ?`, d.Table).Scan(&d.Root); err != nil {
		t.Fatal(err)
	}
	kv, err := sqlite.Open(d.Path, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	for _, it := range []func() (engine.Iterator, error){
		func() (engine.Iterator, error) { return kv.NewIter(nil, nil) },
		func() (engine.Iterator, error) { return kv.NewReverseIter(nil, nil) },
	} {
		i, err := it()
		if err != nil {
			t.Fatal(err)
		}
		if !i.Next() {
			t.Fatal("an empty store", i.Err())
		}
		if d.First == nil {
			d.First = bytes.Clone(i.Key())
		} else {
			d.Last = bytes.Clone(i.Key())
		}
		i.Close()
	}
	return d
}

// Garble overwrites the header of page n (from 1) with bytes no b-tree
// page starts with.
func (d *Damaged) Garble(t *testing.T, n int64) {
	t.Helper()
	f, err := os.OpenFile(d.Path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 8), (n-1)*d.PageSize); err != nil {
		t.Fatal(err)
	}
}

// LastLeaf is the rows table's rightmost leaf page, the one holding its
// greatest key (Last). dbstat names each page by the path of child
// indexes leading to it, in hex of one width, and every leaf stands at the
// same depth, so the greatest path among the leaves is the rightmost. (A
// search of the file for the key's bytes could find a stale copy left in
// the free space of a leaf the key moved out of when its page split.)
func (d *Damaged) LastLeaf(t *testing.T) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+d.Path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path DESC LIMIT 1`, d.Table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Cut truncates the database file to half its length.
func (d *Damaged) Cut(t *testing.T) {
	t.Helper()
	st, err := os.Stat(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(d.Path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// Damage is one way a store is found damaged.
type Damage struct {
	Name   string
	Damage func(t *testing.T, d *Damaged)
}

// Damages are the damages that stop a store from opening: the rows table's
// root page garbled, and the file cut short.
func Damages() []Damage {
	return []Damage{
		{"root page", func(t *testing.T, d *Damaged) { d.Garble(t, d.Root) }},
		{"cut short", func(t *testing.T, d *Damaged) { d.Cut(t) }},
	}
}
