package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/backends/sqlite/sqlitetest"
	"github.com/minca-go/minca/engine"
)

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
			d := sqlitetest.NewDamaged(t)
			d.Garble(t, d.LastLeaf(t))
			kv, err := sqlite.Open(d.Path, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Get(d.First); err != nil {
				t.Fatal("a key on an undamaged page:", err)
			}
			_, err = kv.Get(d.Last)
			wantCorrupt(t, "get", err, d.Path, "malformed")
			it, err := kv.NewIter(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
			}
			wantCorrupt(t, "iterate", it.Err(), d.Path, "malformed")
			it.Close()
			err = kv.GetMany([][]byte{d.First, d.Last}, func(int, []byte) {})
			wantCorrupt(t, "get many", err, d.Path, "malformed")
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
				if !strings.Contains(p, ": damaged: ") || !strings.Contains(p, d.Path) || strings.Contains(p, "\n") {
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
		for _, c := range sqlitetest.Damages() {
			t.Run(m.name+"/"+c.Name, func(t *testing.T) {
				d := sqlitetest.NewDamaged(t)
				c.Damage(t, d)
				kv, err := sqlite.Open(d.Path, m.opts)
				if err != nil {
					wantCorrupt(t, "open", err, d.Path)
					return
				}
				defer kv.Close()
				_, err = kv.Get(d.Last)
				wantCorrupt(t, "get", err, d.Path)
				it, err := kv.NewIter(nil, nil)
				if err == nil {
					for it.Next() {
					}
					err = it.Err()
					it.Close()
				}
				wantCorrupt(t, "iterate", err, d.Path)
				_, err = engine.Open(kv, nil)
				wantCorrupt(t, "the engine's open", err, d.Path)
			})
		}
	}
}

// A damaged block — bytes that do not decode, or a block of a format this
// minca does not know — is damage naming the store and the keys the block
// holds, from a Get of a key in it, GetMany, an iteration either way and
// the engine's Check (which reads every block through VerifyFiles); the
// keys of other blocks stay readable. Nothing panics.
func TestDamagedBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	sqlitetest.Fill(t, path, nil)
	db := openSQL(t, path)
	var first, last []byte
	if err := db.QueryRow(`SELECT min(k), max(k) FROM kvblk WHERE substr(k, 1, 1) = x'76'`).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, last) {
		t.Fatal("the store has one block: the test needs two")
	}
	// The first block cut and padded.
	if _, err := db.Exec(`UPDATE kvblk SET v = substr(v, 1, 9) || zeroblob(30) WHERE k = ?`, first); err != nil {
		t.Fatal(err)
	}
	db.Close()
	inFirst := append(bytes.Clone(first[:8]), first[8]+1) // the block's second vseq
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			kv, err := sqlite.Open(path, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer kv.Close()
			if _, err := kv.Get(last); err != nil {
				t.Fatal("a key of an undamaged block:", err)
			}
			keys := fmt.Sprintf("the block of keys %x to", first)
			_, err = kv.Get(inFirst)
			wantCorrupt(t, "get", err, path, keys)
			err = kv.GetMany([][]byte{inFirst, last}, func(int, []byte) {})
			wantCorrupt(t, "get many", err, path, keys)
			for _, it := range []func() (engine.Iterator, error){
				func() (engine.Iterator, error) { return kv.NewIter(nil, nil) },
				func() (engine.Iterator, error) { return kv.NewReverseIter(nil, nil) },
			} {
				i, err := it()
				if err != nil {
					t.Fatal(err)
				}
				for i.Next() {
				}
				wantCorrupt(t, "iterate", i.Err(), path, keys)
				i.Close()
			}
			probs, err := kv.VerifyFiles(context.Background())
			if err != nil || len(probs) != 1 || !strings.Contains(probs[0], keys) || !strings.Contains(probs[0], path) {
				t.Fatalf("verify: %v, %q", err, probs)
			}
			st, err := engine.Open(kv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			probs, err = st.Check(context.Background(), nil)
			if err != nil || !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, keys) }) {
				t.Fatalf("check: %v, %q", err, probs)
			}
			for _, p := range probs {
				if !strings.Contains(p, ": damaged: ") || !strings.Contains(p, path) || strings.Contains(p, "\n") {
					t.Fatalf("check: %q", p)
				}
			}
		})
	}
}

// A damaged block of a line's places is damage naming the store and the
// places it holds by the engine's keys (the space's tag, not its label),
// from an iteration either way, a Get of a place in it and store check.
func TestDamagedLineBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	sqlitetest.Fill(t, path, nil)
	db := openSQL(t, path)
	var first, head []byte
	if err := db.QueryRow(`SELECT k FROM kvblk WHERE substr(k, 1, 1) = x'6c' ORDER BY k LIMIT 1`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	end := bytes.IndexByte(first, 0)
	if err := db.QueryRow(`SELECT h FROM klabel WHERE l = ?`, first[1:end]).Scan(&head); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE kvblk SET v = x'02' || substr(v, 2) WHERE k = ?`, first); err != nil { // a format no minca knows
		t.Fatal(err)
	}
	db.Close()
	engineFirst := append(append([]byte{'l'}, head...), first[end+1:]...)
	inFirst := append(bytes.Clone(engineFirst[:len(engineFirst)-1]), engineFirst[len(engineFirst)-1]+1)
	keys := fmt.Sprintf("the block of keys %x to", engineFirst)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			kv, err := sqlite.Open(path, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer kv.Close()
			_, err = kv.Get(inFirst)
			wantCorrupt(t, "get", err, path, keys)
			for _, it := range []func() (engine.Iterator, error){
				func() (engine.Iterator, error) { return kv.NewIter([]byte{'l'}, []byte{'m'}) },
				func() (engine.Iterator, error) { return kv.NewReverseIter([]byte{'l'}, []byte{'m'}) },
			} {
				i, err := it()
				if err != nil {
					t.Fatal(err)
				}
				for i.Next() {
				}
				wantCorrupt(t, "iterate", i.Err(), path, keys)
				i.Close()
			}
			probs, err := kv.VerifyFiles(context.Background())
			if err != nil || len(probs) != 1 || !strings.Contains(probs[0], keys) || !strings.Contains(probs[0], path) {
				t.Fatalf("verify: %v, %q", err, probs)
			}
		})
	}
}
