package index_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/judge"
)

// dump is the index table, key to value.
func dump(t *testing.T, st *engine.Store) map[string]string {
	t.Helper()
	it, err := st.IndexReader().NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameDump(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Fatalf("%s: key %q missing", what, k)
		} else if g != v {
			t.Fatalf("%s: key %q holds %q, want %q", what, k, g, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("%s: stray key %q", what, k)
		}
	}
}

// checkQueries runs a few random queries against the reference.
func (w *world) checkQueries(n int) {
	w.t.Helper()
	cur := w.current()
	account := w.ws[2].Key.DID()
	for range n {
		q := w.query()
		q.limit = 1000
		want := refQuery(cur, q.coll, q.where, q.by, q.desc, account)
		var got []string
		for _, e := range w.page(q, "", account).Entries {
			got = append(got, e.Key)
		}
		if !slices.Equal(got, ids(want)) {
			w.t.Fatalf("%s:\n got %q\nwant %q", q.json(""), got, ids(want))
		}
	}
}

// After random creates, edits, deletes and standing changes, on every
// backend, the index kept batch by batch is exactly the index rebuilt from
// the records' current versions, and answers as the reference does. 400
// operations; 150 under -short or -race.
func TestIndexKeptEqualsRebuilt(t *testing.T) {
	ops := 400
	if testing.Short() || race.Enabled {
		ops = 150
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, 42, open(t))
			for i := range ops {
				w.op()
				if i%50 == 49 {
					kept := dump(t, w.st)
					if err := w.st.Reindex(ctx); err != nil {
						t.Fatal(err)
					}
					sameDump(t, "rebuilt after "+name, dump(t, w.st), kept)
					w.checkQueries(20)
				}
			}
			if len(dump(t, w.st)) < 100 {
				t.Fatal("the index holds too little for the test to mean anything")
			}
		})
	}
}

// A store reopened with the same fields keeps its index; with other fields
// it is reindexed, and the new field answers.
func TestReopenReindexesOnNewFields(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	kv, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, 7, kv)
	for range 80 {
		w.op()
	}
	kept := dump(t, w.st)
	w.ix.Close()
	if err := w.st.Close(); err != nil {
		t.Fatal(err)
	}
	reopen := func(f map[string][]string) {
		kv, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.st, w.ix, err = index.Open(kv, &engine.Options{Judge: &judge.Judge{}}, &index.Options{Fields: f})
		if err != nil {
			t.Fatal(err)
		}
		st, ix := w.st, w.ix
		t.Cleanup(func() { ix.Close(); st.Close() })
	}
	reopen(fields)
	sameDump(t, "reopened", dump(t, w.st), kept)
	w.checkQueries(30)
	w.ix.Close()
	w.st.Close()
	reopen(map[string][]string{"app.item": {"b"}})
	if got := dump(t, w.st); len(got) == len(kept) {
		t.Fatal("other fields, yet the same index")
	}
	w.checkQueries(30)
	for range 30 {
		w.op()
	}
	w.checkQueries(30)
}
