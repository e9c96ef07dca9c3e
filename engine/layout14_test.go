package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// historyText is a record's history as its readers tell it: each held
// version's id, standing and storage in 02 §4.3 order, then the current
// version's id.
func historyText(t *testing.T, s *engine.Store, v *record.Version) string {
	t.Helper()
	hs, err := s.History(context.Background(), v.Space, v.Key)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, h := range hs {
		vd, st, err := s.Standing(context.Background(), enginetest.Digest(h.Version))
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s %v/%v %v/%v\n", h.Version.ID, h.Verdict, vd, h.Stored, st)
	}
	return out + "current " + currentOf(t, s, v.Space, v.Key)
}

// A layout 14 store, whose history entries name each version by its id's
// text, checks clean and tells each record's history, standings and
// current version as the store did before its entries were turned into
// that form; it grows in this layout with no upgrade step (an entry whose
// standing changes, and each new one, named by vseq) and answers at every
// step as a store written whole in this layout does, a fork of three
// versions at one seq included: their order (02 §4.3, by id) holds across
// both forms.
func TestLayout14HistoryReadAndGrow(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("layout 14 histories")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	a0 := mustV(t)(w.First("app.note", "0"))
	fork := []*record.Version{mustV(t)(w.Next(a0, "1")), mustV(t)(w.Next(a0, "1b")), mustV(t)(w.Next(a0, "1c"))}
	b0 := mustV(t)(w.First("app.note", "b"))
	b1 := mustV(t)(w.Next(b0, "b1"))
	slices.SortFunc(fork, func(x, y *record.Version) int {
		if record.SupersedesBy(x.Seq, x.ID, y.Seq, y.ID) {
			return -1
		}
		return 1
	})
	// The store under test, and one written whole in this layout, told
	// the same.
	kv := keepKV{memory.Open(nil)}
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, st := range []*engine.Store{s, ref} {
		admitAll(t, st, a0, fork[2], fork[0], b0)
		admitAll(t, st, fork[1], b1.Stub())
		if err := st.SetStanding(ctx, enginetest.Digest(fork[0]), engine.Withdrawn); err != nil {
			t.Fatal(err)
		}
	}
	same := func(when string) {
		t.Helper()
		for _, v := range []*record.Version{a0, b0} {
			if got, want := historyText(t, s, v), historyText(t, ref, v); got != want {
				t.Fatalf("%s, record %s:\n%s\nwant\n%s", when, v.Key, got, want)
			}
		}
		if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
			t.Fatalf("%s, check: %v %v", when, probs, err)
		}
	}
	// The fork's second, by id, is the first that stands (a stub: the
	// record reads as not held, 02 §4.5); by vseq it would be its third.
	hs, err := s.History(ctx, sp, a0.Key)
	if err != nil || len(hs) != 4 || hs[0].Version.ID != fork[0].ID || hs[1].Version.ID != fork[1].ID || hs[2].Version.ID != fork[2].ID {
		t.Fatalf("before: %s (%v)", historyText(t, s, a0), err)
	}
	same("before")
	s.Close()
	forms := func(wantID, wantVseq int) {
		t.Helper()
		byID, byVseq, err := engine.HistoryForms(kv)
		if err != nil || byID != wantID || byVseq != wantVseq {
			t.Fatalf("%d history entries by id and %d by vseq, want %d and %d (%v)", byID, byVseq, wantID, wantVseq, err)
		}
	}
	forms(0, 6)
	if err := engine.Layout14(kv, 14); err != nil {
		t.Fatal(err)
	}
	forms(6, 0)
	if state, _ := kv.Get([]byte("_state")); state[0] != 14 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}

	s, err = engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	same("the layout 14 store")
	// The fork's first stands again and its second is withdrawn: two
	// entries by id become entries by vseq, in the same run of one seq as
	// an entry by id.
	for _, st := range []*engine.Store{s, ref} {
		if err := st.SetStanding(ctx, enginetest.Digest(fork[0]), engine.Stands); err != nil {
			t.Fatal(err)
		}
		if err := st.SetStanding(ctx, enginetest.Digest(fork[1]), engine.Withdrawn); err != nil {
			t.Fatal(err)
		}
	}
	forms(4, 2)
	same("standings changed")
	if currentOf(t, s, sp, a0.Key) != fork[0].ID {
		t.Fatalf("current %s, want the fork's first %s", currentOf(t, s, sp, a0.Key), fork[0].ID)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("the layout 14 store written to is in layout %d", state[0])
	}
	a2 := mustV(t)(w.Next(fork[2], "2"))
	for _, st := range []*engine.Store{s, ref} {
		admitAll(t, st, a2)
		if err := st.SetStanding(ctx, enginetest.Digest(a2), engine.Withdrawn); err != nil {
			t.Fatal(err)
		}
	}
	forms(4, 3)
	same("grown")
}
