package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// changeLog reads a store's whole change log.
func changeLog(t *testing.T, s *engine.Store) []engine.Change {
	t.Helper()
	var out []engine.Change
	for c, err := range s.ChangeLog(context.Background(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// A layout 13 store, whose change log names each change's versions by
// digest, checks clean and tells the same changes, facts and all, as the
// store did before its entries were turned into that form; it grows in
// this layout with no upgrade step, its new entries naming versions by
// vseq, and the log reads on across both forms.
func TestLayout13ChangesReadAndGrow(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("layout 13 changes")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	a0 := mustV(t)(w.First("app.note", "0"))
	a1 := mustV(t)(w.Next(a0, "1"))
	b0 := mustV(t)(w.First("app.note", "b"))
	w.Fork("app.note")
	b1 := mustV(t)(w.First("app.note", "b again")) // a fork at b0's place
	c0 := mustV(t)(w.First("app.note", "c"))
	kv := keepKV{memory.Open(nil)}
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	admitAll(t, s, a0, a1, b0)
	admitAll(t, s, b1)
	if err := s.SetStanding(ctx, enginetest.Digest(a1), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	admitAll(t, s, c0.Stub())
	before := changeLog(t, s)
	s.Close()
	if len(before) != 7 {
		t.Fatalf("%d changes: %+v", len(before), before)
	}
	if d, v, err := engine.ChangeForms(kv); err != nil || d != 0 || v != 4 {
		t.Fatalf("this layout wrote %d change log entries by digest and %d by vseq, want 0 and 4 (%v)", d, v, err)
	}
	if err := engine.Layout13(kv, 13); err != nil {
		t.Fatal(err)
	}
	if d, v, err := engine.ChangeForms(kv); err != nil || d != 4 || v != 0 {
		t.Fatalf("the layout 13 store has %d change log entries by digest and %d by vseq, want 4 and 0 (%v)", d, v, err)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != 13 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}

	s, err = engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check of the layout 13 store: %v %v", probs, err)
	}
	if got := changeLog(t, s); !slices.Equal(got, before) {
		t.Fatalf("the layout 13 store's change log:\n%+v\nwant\n%+v", got, before)
	}
	d0 := mustV(t)(w.First("app.note", "d"))
	admitAll(t, s, d0)
	if d, v, err := engine.ChangeForms(kv); err != nil || d != 4 || v != 1 {
		t.Fatalf("the grown store has %d change log entries by digest and %d by vseq, want 4 and 1 (%v)", d, v, err)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("the layout 13 store written to is in layout %d", state[0])
	}
	got := changeLog(t, s)
	want := append(slices.Clone(before), engine.Change{Seq: 8, ID: enginetest.Digest(d0), Kind: engine.Stored, From: "p",
		Facts: true, Verdict: engine.Stands, Current: enginetest.Digest(d0)})
	if !slices.Equal(got, want) {
		t.Fatalf("the grown store's change log:\n%+v\nwant\n%+v", got, want)
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check of the grown store: %v %v", probs, err)
	}
}
