package sqlite_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/internal/localtest"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/backends/sqlite/sqlitetest"
	"github.com/minca-go/minca/engine"
)

func openSQL(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// engineKeyBytes is the bytes of every key the store holds, as the
// engine's.
func engineKeyBytes(t *testing.T, path string) (n, keys int64) {
	t.Helper()
	kv, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	it, err := kv.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
		n, keys = n+int64(len(it.Key())), keys+1
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		t.Fatal(err)
	}
	return n, keys
}

// A new store keeps its rows in kvl, a space's tag in a key as a label of
// a few bytes (the store holds one space: one label), and reads back
// every version; its kv table holds one row alone.
func TestKeysLabelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	vs := sqlitetest.Fill(t, path, nil)
	db := openSQL(t, path)
	var rows, labels, plain, storedBytes, longLabel int64
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM kvl), (SELECT coalesce(sum(length(k)), 0) FROM kvl),
		(SELECT count(*) FROM klabel), (SELECT coalesce(max(length(l)), 0) FROM klabel), (SELECT count(*) FROM kv)`).Scan(
		&rows, &storedBytes, &labels, &longLabel, &plain); err != nil {
		t.Fatal(err)
	}
	engineBytes, keys := engineKeyBytes(t, path)
	if keys != rows || plain != 1 || labels != 1 || longLabel > 2 {
		t.Fatalf("%d keys read, %d rows in kvl, %d in kv, %d labels (longest %d bytes)", keys, rows, plain, labels, longLabel)
	}
	// Most keys carry the space's tag: 33 bytes each, a label of one
	// or two and its end in the store.
	if saved := engineBytes - storedBytes; saved < rows*30/2 {
		t.Fatalf("stored keys %d bytes, the engine's %d: %d saved over %d rows", storedBytes, engineBytes, saved, rows)
	}
	kv, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	localtest.ReadBack(t, kv, vs)
}

// A minca from before labels reads the kv table as the store's: there it
// finds the engine's state of a later layout, and refuses the store as
// written by a later minca rather than read labelled keys as the
// engine's. (This minca reads a file without kvl the same way.)
func TestEarlierMincaRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	sqlitetest.Fill(t, path, nil)
	db := openSQL(t, path)
	if _, err := db.Exec(`DROP TABLE kvl; DROP TABLE klabel`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	kv, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	st, err := engine.Open(kv, nil)
	if err == nil {
		st.Close()
	}
	if !errors.Is(err, engine.ErrLayout) || !strings.Contains(err.Error(), "written by a later minca") {
		t.Fatalf("the kv table of a store with labels: %v", err)
	}
}

// A store of the schema before labels (its rows in kv, keys as they are)
// is read and written as it is, open after open: no kvl is made.
func TestPlainStoreKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db := openSQL(t, path)
	if _, err := db.Exec(`CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID;
		CREATE TABLE zdict (id INTEGER PRIMARY KEY, d BLOB NOT NULL);
		INSERT INTO kv (k, v) VALUES (X'6d6e6f7465', X'01')`); err != nil { // 'm' "note": a caller's meta value
		t.Fatal(err)
	}
	db.Close()
	kv, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	vs := localtest.Fill(t, kv, nil)
	if kv, err = sqlite.Open(path, nil); err != nil { // opened to write again
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	if kv, err = sqlite.Open(path, &sqlite.Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	localtest.ReadBack(t, kv, vs)
	db = openSQL(t, path)
	var kvl, rows int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM sqlite_schema WHERE name IN ('kvl', 'klabel')), (SELECT count(*) FROM kv)`).Scan(&kvl, &rows); err != nil {
		t.Fatal(err)
	}
	engineBytes, keys := engineKeyBytes(t, path)
	if kvl != 0 || int64(rows) != keys || engineBytes == 0 {
		t.Fatalf("%d tables of labels, %d rows in kv, %d keys read", kvl, rows, keys)
	}
}

// Damaged labels are damage: a label out of its heads' order stops the
// store opening, and a key whose label is gone fails a read, each naming
// the store on one line.
func TestDamagedLabels(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		atOpen    bool
	}{
		{"label gone", `DELETE FROM klabel`, false},
		{"labels out of order", `INSERT INTO klabel (h, l) VALUES (X'00', X'ff')`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			sqlitetest.Fill(t, path, nil)
			db := openSQL(t, path)
			if _, err := db.Exec(c.sql); err != nil {
				t.Fatal(err)
			}
			db.Close()
			kv, err := sqlite.Open(path, nil)
			if c.atOpen {
				if err == nil {
					kv.Close()
				}
				wantCorrupt(t, "open", err, path, "out of")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer kv.Close()
			it, err := kv.NewIter(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
			}
			wantCorrupt(t, "iterate", it.Err(), path, "label")
			it.Close()
		})
	}
}
