package sqlite_test

import (
	"bytes"
	"database/sql"
	"encoding/base32"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/backends/sqlite/sqlitetest"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// The suite again, the crash test among it, on stores that train their
// compression table after 8 KiB of values: nearly every value the suite writes
// is compressed, and a child killed mid-import leaves a store that reads.
func TestSuiteCompressed(t *testing.T) {
	o := &sqlite.Options{TrainBytes: 8 << 10}
	enginetest.Run(t, func(t *testing.T) engine.KV {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "db"), o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, enginetest.Reopen(func(path string) (engine.KV, error) { return sqlite.Open(path, o) }))
}

// envelopeLike is a value shaped as the engine's versions are: JSON
// field names repeated from value to value, ids and a signature random.
func envelopeLike(r *rand.Rand, i int) []byte {
	rnd := func(n int) string {
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
	}
	return fmt.Appendf(nil, `{"author":"%s","bodyHash":"%s","createdAt":%d,"key":"notes/%d","log":{"n":%d,"prev":"%s"},"prev":"%s","sig":"%s","space":"%s","body":{"title":"note %d","text":"%s"}}`,
		rnd(33), rnd(33), 1700000000000+i, i, i, rnd(33), rnd(33), rnd(64), "s"+rnd(20), i, strings.Repeat("some words again ", 1+i%5))
}

func writeAll(t *testing.T, kv engine.KV, vals map[string][]byte, keys []string) {
	t.Helper()
	for lo := 0; lo < len(keys); lo += 50 {
		b, err := kv.NewBatch()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys[lo:min(lo+50, len(keys))] {
			b.Set([]byte(k), vals[k])
		}
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
	}
}

// readBack reads every value by Get, GetMany, and both iterators.
func readBack(t *testing.T, kv engine.KV, vals map[string][]byte, keys []string) {
	t.Helper()
	for _, k := range keys {
		v, err := kv.Get([]byte(k))
		if err != nil || !bytes.Equal(v, vals[k]) {
			t.Fatalf("Get %s: %q, %v", k, v, err)
		}
	}
	sorted := slices.Sorted(slices.Values(keys))
	bks := make([][]byte, len(keys))
	for i, k := range sorted {
		bks[i] = []byte(k)
	}
	n := 0
	if err := kv.GetMany(bks, func(i int, v []byte) {
		n++
		if !bytes.Equal(v, vals[sorted[i]]) {
			t.Errorf("GetMany %s: %q", sorted[i], v)
		}
	}); err != nil || n != len(keys) {
		t.Fatalf("GetMany: %d of %d, %v", n, len(keys), err)
	}
	its := []func() (engine.Iterator, error){
		func() (engine.Iterator, error) { return kv.NewIter(nil, nil) },
		func() (engine.Iterator, error) { return kv.(engine.ReverseReader).NewReverseIter(nil, nil) },
	}
	for _, open := range its {
		it, err := open()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for it.Next() {
			n++
			if want, ok := vals[string(it.Key())]; !ok || !bytes.Equal(it.Value(), want) {
				t.Fatalf("iterator at %s: %q", it.Key(), it.Value())
			}
		}
		if err := errors.Join(it.Err(), it.Close()); err != nil || n != len(keys) {
			t.Fatalf("iterator: %d of %d, %v", n, len(keys), err)
		}
	}
}

// stored is what the database file keeps: its rows by how each value is
// kept, the bytes of those compressed and what they hold, and the
// compression tables.
type stored struct {
	raw, compressed, dicts int
	bytes                  int64
}

func storedIn(t *testing.T, path string) stored {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s stored
	rows, tables := sqlitetest.RowsTable(t, db), "zdict"
	if rows == "kvs" || rows == "kvt" || rows == "kvu" {
		tables = "zs2" // a store made now: a dictionary and Huffman codes
	}
	if err := db.QueryRow(`SELECT
		(SELECT count(*) FROM `+rows+` WHERE z IS NULL),
		(SELECT count(*) FROM `+rows+` WHERE z IS NOT NULL),
		(SELECT coalesce(sum(length(v)), 0) FROM `+rows+` WHERE z IS NOT NULL),
		(SELECT count(*) FROM `+tables+`)`).Scan(&s.raw, &s.compressed, &s.bytes, &s.dicts); err != nil {
		t.Fatal(err)
	}
	return s
}

func corpus(n int) (map[string][]byte, []string) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := map[string][]byte{}
	var keys []string
	for i := range n {
		k := fmt.Sprintf("v%06d", i)
		keys = append(keys, k)
		vals[k] = envelopeLike(r, i)
		if i%7 == 0 {
			k := fmt.Sprintf("e%06d", i) // a small value, kept as it is
			keys = append(keys, k)
			vals[k] = []byte{byte(i), 1, 2}
		}
	}
	return vals, keys
}

// Values of a store are compressed once it has sampled enough of them:
// the table is kept beside them, they read back the same through
// every read (open again, and read-only), and the compressed rows hold
// less than three quarters of what they hold.
func TestValuesCompressed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	vals, keys := corpus(2000)
	kv, err := sqlite.Open(path, &sqlite.Options{TrainBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, kv, vals, keys)
	readBack(t, kv, vals, keys)
	kv.Close()
	s := storedIn(t, path)
	small := len(keys) - 2000 // values too short to compress
	if s.dicts != 1 || s.compressed < 1800 || s.raw > small+200 {
		t.Fatalf("%d values compressed, %d as they are, %d tables; want nearly all compressed with one", s.compressed, s.raw, s.dicts)
	}
	var held int64
	for _, v := range vals {
		if len(v) > 100 {
			held += int64(len(v))
		}
	}
	if s.bytes*4 > held*3 {
		t.Fatalf("compressed rows hold %d bytes for %d", s.bytes, held)
	}
	t.Logf("compressed rows hold %d bytes for %d", s.bytes, held)
	for _, ro := range []bool{false, true} {
		kv, err := sqlite.Open(path, &sqlite.Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		readBack(t, kv, vals, keys)
		kv.Close()
	}
}

// A store written before values were compressed (no z column, no
// table) is read as it is read-only; opened to write, it takes the
// column, reads as before, and compresses what it writes next.
func TestStoreBeforeCompression(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	vals, keys := corpus(1000)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[:len(keys)/2] {
		if _, err := db.Exec(`INSERT INTO kv (k, v) VALUES (?, ?)`, []byte(k), vals[k]); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	half := map[string][]byte{}
	for _, k := range keys[:len(keys)/2] {
		half[k] = vals[k]
	}
	kv, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	readBack(t, kv, half, keys[:len(keys)/2])
	kv.Close()

	kv, err = sqlite.Open(path, &sqlite.Options{TrainBytes: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	readBack(t, kv, half, keys[:len(keys)/2])
	writeAll(t, kv, vals, keys[len(keys)/2:])
	readBack(t, kv, vals, keys)
	kv.Close()
	if s := storedIn(t, path); s.dicts != 1 || s.compressed < 300 {
		t.Fatalf("%d values compressed, %d tables", s.compressed, s.dicts)
	}
}

// A compressed value that does not decompress, or a row kept in a way
// this backend does not know, is damage naming the key, not a value.
func TestDamagedCompressedValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	vals, keys := corpus(500)
	kv, err := sqlite.Open(path, &sqlite.Options{TrainBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, kv, vals, keys)
	kv.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var bad, odd []byte
	rows := sqlitetest.RowsTable(t, db) // its keys ('v…') are kept as they are
	if err := db.QueryRow(`SELECT k FROM ` + rows + ` WHERE z = 1 ORDER BY k LIMIT 1`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT k FROM ` + rows + ` WHERE z = 1 ORDER BY k DESC LIMIT 1`).Scan(&odd); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE `+rows+` SET v = substr(v, 1, 6) || zeroblob(40) WHERE k = ?`, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE `+rows+` SET z = 7 WHERE k = ?`, odd); err != nil {
		t.Fatal(err)
	}
	db.Close()
	kv, err = sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	for _, k := range [][]byte{bad, odd} {
		_, err := kv.Get(k)
		if !errors.Is(err, engine.ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("%x", k)) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Get %s: %v, want damage naming the key on one line", k, err)
		}
	}
	it, err := kv.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
	}
	if err := it.Err(); !errors.Is(err, engine.ErrCorrupt) {
		t.Errorf("iterating over damage: %v", err)
	}
	it.Close()
}
