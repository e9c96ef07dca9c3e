package sqlite_test

import (
	"context"
	"errors"
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
