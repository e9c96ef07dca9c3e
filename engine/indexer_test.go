package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// recIndexer keeps one index key a readable record, naming its current
// version, and logs each call as "key: old → new".
type recIndexer struct {
	layout string
	calls  []string
	fail   error
}

func (x *recIndexer) Layout() string { return x.layout }

func (x *recIndexer) Current(b engine.IndexBatch, c engine.CurrentChange) (any, error) {
	if x.fail != nil {
		return nil, x.fail
	}
	name := func(v *record.Version) string {
		if v == nil {
			return "-"
		}
		return v.ID[len(v.ID)-6:]
	}
	if (c.New == nil) != (c.NewJSON == nil) {
		return nil, fmt.Errorf("NewJSON without New or New without NewJSON")
	}
	if c.New != nil {
		if c.New.IsStub() {
			return nil, fmt.Errorf("a stub given as New")
		}
		back, err := record.Decode(c.NewJSON)
		if err != nil || back.ID != c.New.ID {
			return nil, fmt.Errorf("NewJSON is not New: %v", err)
		}
	}
	if c.Old != nil {
		// What the index holds for the record is what was New before.
		got, ok, err := b.Get([]byte("r/" + c.Key))
		if err != nil || !ok || string(got) != c.Old.ID {
			return nil, fmt.Errorf("old %s, the index held %q (%v)", c.Old.ID, got, err)
		}
	}
	call := c.Key[len(c.Key)-4:] + ": " + name(c.Old) + " → " + name(c.New)
	x.calls = append(x.calls, call)
	if c.New == nil {
		b.Delete([]byte("r/" + c.Key))
	} else {
		b.Set([]byte("r/"+c.Key), []byte(c.New.ID))
	}
	return call, nil
}

// keepKV is a memory KV that survives its store's Close, to reopen.
type keepKV struct{ *memory.Store }

func (keepKV) Close() error { return nil }

func indexTable(t *testing.T, s *engine.Store) map[string]string {
	t.Helper()
	it, err := s.IndexReader().NewIter(nil, nil)
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

func mustV(t *testing.T) func(*record.Version, error) *record.Version {
	return func(v *record.Version, err error) *record.Version {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// The indexer hears of every change of a record's readable current version
// — stored, body added to a stub, standing changed, deleted — inside the
// batch, with what it held before; what it returns rides on EventCurrent.
func TestIndexerHearsEveryCurrentChange(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("indexer")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	x := &recIndexer{layout: "rec/1"}
	kv := keepKV{memory.Open(nil)}
	s, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}, Indexer: x})
	if err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe(sp, 64)
	a0 := mustV(t)(w.First("app.note", "0", enginetest.Retain))
	a1 := mustV(t)(w.Next(a0, "1"))
	a2 := mustV(t)(w.Next(a1, "2"))
	a3 := mustV(t)(w.Delete(a2))
	short := func(v *record.Version) string { return v.ID[len(v.ID)-6:] }
	k := a0.Key[len(a0.Key)-4:]
	admit := func(vs ...*record.Version) {
		t.Helper()
		if _, err := s.Admit(ctx, "p", vs); err != nil {
			t.Fatal(err)
		}
	}
	admit(a0)
	admit(a1)
	if err := s.SetStanding(ctx, enginetest.Digest(a1), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStanding(ctx, enginetest.Digest(a1), engine.Stands); err != nil {
		t.Fatal(err)
	}
	admit(a2.Stub()) // the first that stands is a stub: the record does not read
	admit(a2)        // its body arrives
	admit(a3)
	want := []string{
		k + ": - → " + short(a0),
		k + ": " + short(a0) + " → " + short(a1),
		k + ": " + short(a1) + " → " + short(a0), // a1 withdrawn: the retained a0 reads
		k + ": " + short(a0) + " → " + short(a1),
		k + ": " + short(a1) + " → -",
		k + ": - → " + short(a2),
		k + ": " + short(a2) + " → " + short(a3), // a delete is a current version
	}
	if !slices.Equal(x.calls, want) {
		t.Fatalf("calls\n%q\nwant\n%q", x.calls, want)
	}
	var carried []string
	for len(sub.Events()) > 0 {
		if e := <-sub.Events(); e.Kind == engine.EventCurrent {
			carried = append(carried, e.Indexed.(string))
		}
	}
	if !slices.Equal(carried, want) {
		t.Fatalf("events carried\n%q\nwant\n%q", carried, want)
	}
	if got := indexTable(t, s); len(got) != 1 || got["r/"+a0.Key] != a3.ID {
		t.Fatalf("index table %v", got)
	}

	// A failing indexer aborts the batch: nothing of it is stored.
	b0 := mustV(t)(w.First("app.note", "b"))
	x.fail = errors.New("disk on fire")
	if _, err := s.Admit(ctx, "p", []*record.Version{b0}); err == nil || !errors.Is(err, x.fail) {
		t.Fatalf("admit with a failing indexer: %v", err)
	}
	if _, _, err := s.Standing(ctx, enginetest.Digest(b0)); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a batch whose indexing failed was stored: %v", err)
	}
	x.fail = nil
	admit(b0)
	before := indexTable(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Same layout: no reindex. The table is as it was.
	x.calls = nil
	s, err = engine.Open(kv, &engine.Options{Judge: &judge.Judge{}, Indexer: x})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.calls) != 0 {
		t.Fatalf("reopened with the same layout, yet reindexed: %q", x.calls)
	}
	// A batch written with no indexer leaves the table behind; the next
	// open with one reindexes.
	s.Close()
	s, err = engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	b1 := mustV(t)(w.Next(b0, "b1"))
	admit(b1)
	s.Close()
	s, err = engine.Open(kv, &engine.Options{Judge: &judge.Judge{}, Indexer: x})
	if err != nil {
		t.Fatal(err)
	}
	before["r/"+b0.Key] = b1.ID
	if got := indexTable(t, s); !mapsEqual(got, before) {
		t.Fatalf("after reindex %v, want %v", got, before)
	}
	if len(x.calls) != 2 {
		t.Fatalf("reindex calls %q, want one a readable record", x.calls)
	}
	// A new layout reindexes too, and a stale key of the old one is gone.
	s.Close()
	kb, _ := kv.NewBatch()
	kb.Set([]byte("istale"), []byte("x")) // 'i' is the index table
	if err := kb.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	x.layout, x.calls = "rec/2", nil
	s, err = engine.Open(kv, &engine.Options{Judge: &judge.Judge{}, Indexer: x})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexTable(t, s); !mapsEqual(got, before) || len(x.calls) != 2 {
		t.Fatalf("after a layout change %v (calls %q)", got, x.calls)
	}
	s.Close()
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
