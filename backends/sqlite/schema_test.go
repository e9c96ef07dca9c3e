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
// engine's, but for the versions' ('v') and the lines' places ('l'),
// which a store made now keeps in blocks: those it counts apart.
func engineKeyBytes(t *testing.T, path string) (n, keys, versions int64) {
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
		if it.Key()[0] == 'v' || it.Key()[0] == 'l' {
			versions++
			continue
		}
		n, keys = n+int64(len(it.Key())), keys+1
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		t.Fatal(err)
	}
	return n, keys, versions
}

// A new store keeps its rows in kvu (the versions' values and the lines'
// places in blocks), a space's tag in a key as a label of a few bytes (the
// store holds one space: one label), and reads back every version; its
// kv, kvl, kvs and kvt tables hold one row each.
func TestKeysLabelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	vs := sqlitetest.Fill(t, path, nil)
	db := openSQL(t, path)
	var rows, labels, plain, stub, coded, blocked, storedBytes, longLabel, blocks, lineBlocks int64
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM kvu WHERE substr(k, 1, 1) NOT IN (x'76', x'6c')), (SELECT coalesce(sum(length(k)), 0) FROM kvu WHERE substr(k, 1, 1) NOT IN (x'76', x'6c')),
		(SELECT count(*) FROM klabel), (SELECT coalesce(max(length(l)), 0) FROM klabel), (SELECT count(*) FROM kv),
		(SELECT count(*) FROM kvl), (SELECT count(*) FROM kvs), (SELECT count(*) FROM kvt), (SELECT count(*) FROM kvblk),
		(SELECT count(*) FROM kvblk WHERE substr(k, 1, 1) = x'6c')`).Scan(
		&rows, &storedBytes, &labels, &longLabel, &plain, &stub, &coded, &blocked, &blocks, &lineBlocks); err != nil {
		t.Fatal(err)
	}
	engineBytes, keys, versions := engineKeyBytes(t, path)
	if keys != rows || plain != 1 || stub != 1 || coded != 1 || blocked != 1 || labels != 1 || longLabel > 2 {
		t.Fatalf("%d keys read, %d rows in kvu, %d in kv, %d in kvl, %d in kvs, %d in kvt, %d labels (longest %d bytes)", keys, rows, plain, stub, coded, blocked, labels, longLabel)
	}
	if versions < int64(len(vs)) || blocks < versions/64 || lineBlocks == 0 {
		t.Fatalf("%d versions' values and places read for %d versions, %d blocks, %d of places", versions, len(vs), blocks, lineBlocks)
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
	refusedAsLater(t, `DROP TABLE kvu; DROP TABLE kvt; DROP TABLE kvblk; DROP TABLE kvs; DROP TABLE zs2; DROP TABLE kvl; DROP TABLE klabel`, "the kv table of a store with labels")
}

// refusedAsLater makes a store of this minca, drops the tables drop names
// to stand in for an earlier minca that knows none of them, and checks
// that the store is refused as written by a later minca.
func refusedAsLater(t *testing.T, drop, what string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	sqlitetest.Fill(t, path, nil)
	db := openSQL(t, path)
	if _, err := db.Exec(drop); err != nil {
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
		t.Fatalf("%s: %v", what, err)
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
	engineBytes, keys, versions := engineKeyBytes(t, path)
	if kvl != 0 || int64(rows) != keys+versions || engineBytes == 0 {
		t.Fatalf("%d tables of labels, %d rows in kv, %d keys read", kvl, rows, keys)
	}
}

// A minca of the schema before (labels, values Huffman-coded alone) reads
// the kvl table as the store's: there it finds the engine's state of a
// later layout, and refuses the store as written by a later minca rather
// than read values coded with a dictionary as damaged. (This minca reads
// a file with kvl and without kvs the same way.)
func TestLabelsMincaRefuses(t *testing.T) {
	refusedAsLater(t, `DROP TABLE kvu; DROP TABLE kvt; DROP TABLE kvblk; DROP TABLE kvs; DROP TABLE zs2`, "the kvl table of a store with values coded with a dictionary")
}

// A minca of the schema before blocks (rows in kvs, values coded with a
// dictionary one by one) reads the kvs table as the store's: there it
// finds the engine's state of a later layout, and refuses the store as
// written by a later minca rather than miss every version a block holds.
// (This minca reads a file with kvs and without kvt the same way.)
func TestDictMincaRefuses(t *testing.T) {
	refusedAsLater(t, `DROP TABLE kvu; DROP TABLE kvt; DROP TABLE kvblk`, "the kvs table of a store with blocks")
}

// A minca of the schema before lines' blocks (rows in kvt, the versions'
// values alone in blocks) reads the kvt table as the store's: there it
// finds the engine's state of a later layout, and refuses the store as
// written by a later minca rather than miss every line's place a block
// holds. (This minca reads a file with kvt and without kvu the same way.)
func TestBlocksMincaRefuses(t *testing.T) {
	refusedAsLater(t, `DROP TABLE kvu`, "the kvt table of a store with lines' blocks")
}

// A store of the schema before lines' blocks (rows in kvt, the versions'
// values alone in blocks) is read and written as it is, open after open:
// its lines' places stay rows, and no kvu is made.
func TestBlockedStoreKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db := openSQL(t, path)
	if _, err := db.Exec(`CREATE TABLE kvt (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID;
		CREATE TABLE kvblk (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;
		CREATE TABLE kvs (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID;
		CREATE TABLE klabel (h BLOB PRIMARY KEY, l BLOB NOT NULL UNIQUE) WITHOUT ROWID;
		CREATE TABLE zs2 (id INTEGER PRIMARY KEY, s BLOB NOT NULL, d BLOB NOT NULL);
		CREATE TABLE kvl (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID;
		CREATE TABLE zdict (id INTEGER PRIMARY KEY, d BLOB NOT NULL);
		CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID;
		INSERT INTO kv (k, v) VALUES (CAST('_state' AS BLOB), X'3f');
		INSERT INTO kvl (k, v) VALUES (CAST('_state' AS BLOB), X'3f');
		INSERT INTO kvs (k, v) VALUES (CAST('_state' AS BLOB), X'3f')`); err != nil { // as that schema's minca made it
		t.Fatal(err)
	}
	db.Close()
	vs := sqlitetest.Fill(t, path, nil)
	kv, err := sqlite.Open(path, nil) // opened to write again
	if err != nil {
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
	var kvu, places, versionBlocks, otherBlocks int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM sqlite_schema WHERE name = 'kvu'), (SELECT count(*) FROM kvt WHERE substr(k, 1, 1) = x'6c'),
		(SELECT count(*) FROM kvblk WHERE substr(k, 1, 1) = x'76'), (SELECT count(*) FROM kvblk WHERE substr(k, 1, 1) <> x'76')`).Scan(&kvu, &places, &versionBlocks, &otherBlocks); err != nil {
		t.Fatal(err)
	}
	if kvu != 0 || places == 0 || versionBlocks == 0 || otherBlocks != 0 {
		t.Fatalf("%d tables kvu, %d places as rows of kvt, %d blocks of versions and %d others", kvu, places, versionBlocks, otherBlocks)
	}
}

// A store of the schema before (rows in kvl, keys labelled, values
// Huffman-coded alone by the tables in zdict) is read and written as it
// is, open after open: its values are coded with the codes alone, and no
// kvs or zs2 is made.
func TestLabelledStoreKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db := openSQL(t, path)
	if _, err := db.Exec(`CREATE TABLE kvl (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID;
		CREATE TABLE klabel (h BLOB PRIMARY KEY, l BLOB NOT NULL UNIQUE) WITHOUT ROWID;
		CREATE TABLE zdict (id INTEGER PRIMARY KEY, d BLOB NOT NULL);
		CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID;
		INSERT INTO kv (k, v) VALUES (CAST('_state' AS BLOB), X'3f')`); err != nil { // layout 63, as that schema's minca wrote it
		t.Fatal(err)
	}
	db.Close()
	vals, keys := corpus(2000)
	for _, opts := range []*sqlite.Options{{TrainBytes: 64 << 10}, nil} { // written, then written again
		kv, err := sqlite.Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, kv, vals, keys)
		readBack(t, kv, vals, keys)
		if err := kv.Close(); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	readBack(t, kv, vals, keys)
	kv.Close()
	db = openSQL(t, path)
	var newer, rows, coded, tables int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM sqlite_schema WHERE name IN ('kvs', 'zs2')), (SELECT count(*) FROM kvl),
		(SELECT count(*) FROM kvl WHERE z IS NOT NULL), (SELECT count(*) FROM zdict)`).Scan(&newer, &rows, &coded, &tables); err != nil {
		t.Fatal(err)
	}
	if newer != 0 || rows != len(keys) || coded < 1800 || tables != 1 {
		t.Fatalf("%d tables of the schema after, %d rows in kvl for %d keys, %d values coded, %d tables of codes in zdict", newer, rows, len(keys), coded, tables)
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
