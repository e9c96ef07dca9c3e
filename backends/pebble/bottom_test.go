package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// bottomCodings counts the bottom level's tables by their compression,
// and the range key deletions any level holds.
func bottomCodings(t *testing.T, db *pebble.DB) (map[string]int, uint64) {
	t.Helper()
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	var rangeDels uint64
	for l, tables := range levels {
		for _, tb := range tables {
			if l == len(levels)-1 {
				by[tb.Properties.CompressionName]++
			}
			rangeDels += tb.Properties.NumRangeKeyDels
		}
	}
	return by, rangeDels
}

// A table that reached the bottom level in another coding than the
// bottom's (Pebble moves a table down unchanged when nothing below
// overlaps it) is rewritten by Compact in the bottom's, every key read as
// before, and the marks that made the compaction rewrite it are gone.
// Compact then finds nothing more to mark. Marks left without the
// compaction change nothing a reader sees.
func TestCompactRecodesTheBottomLevel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	// A store whose bottom level is in Snappy, as such moves leave it.
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 20_000 {
		k := binary.BigEndian.AppendUint64([]byte{'v'}, uint64(i+1))
		v := fmt.Sprintf(`{"author":"did:key:z%d","seq":%d,"text":"edit %d of a record"}`, i%7, i%5, i)
		want[string(k)] = v
		if err := db.Set(k, []byte(v), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		t.Fatal(err)
	}
	if by, _ := bottomCodings(t, db); by[bottomCoding.Name] != 0 || len(by) == 0 {
		t.Fatalf("the store made for the test has bottom tables coded %v, want none in %s", by, bottomCoding.Name)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	readAll := func(when string) {
		t.Helper()
		it, err := s.NewIter(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for it.Next() {
			if w, ok := want[string(it.Key())]; !ok || !bytes.Equal(it.Value(), []byte(w)) {
				t.Fatalf("%s, %x = %q; want %q (held %v)", when, it.Key(), it.Value(), w, ok)
			}
			n++
		}
		if err := it.Close(); err != nil || n != len(want) {
			t.Fatalf("%s, %d keys read (%v), want %d", when, n, err, len(want))
		}
	}
	// Marks left in the store (a Compact stopped before it compacted)
	// delete nothing, read as sound tables, and stay so across a reopen.
	if marked, err := s.markStrays(); marked == 0 || err != nil {
		t.Fatalf("marked %d tables (%v), want the Snappy ones", marked, err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	readAll("marked")
	if probs, err := s.VerifyFiles(context.Background()); len(probs) != 0 || err != nil {
		t.Fatalf("marked, VerifyFiles: %v %v", probs, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	readAll("marked and reopened")

	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	by, rangeDels := bottomCodings(t, s.db)
	if len(by) != 1 || by[bottomCoding.Name] == 0 || rangeDels != 0 {
		t.Fatalf("after Compact: bottom tables coded %v and %d range key deletions, want all %s and none", by, rangeDels, bottomCoding.Name)
	}
	readAll("after Compact")
	if marked, err := s.markStrays(); marked != 0 || err != nil {
		t.Fatalf("a settled store marks %d tables (%v), want none", marked, err)
	}
}
