package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/internal/keys"
)

// lineForms counts the places of writers' lines whose value names its
// versions by digest (as layout 12 and before wrote them) and by vseq.
func lineForms(t *testing.T, kv engine.KV) (byDigest, byVseq int) {
	t.Helper()
	err := engine.EachInFamily(kv, keys.Line, func(k, val []byte) error {
		_, _, v, ok := keys.ReadPlace(val)
		switch {
		case !ok:
			t.Fatalf("line place %x: value %x of neither form", k, val)
		case v:
			byVseq++
		default:
			byDigest++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byDigest, byVseq
}

// A layout 12 store, whose writers' lines name the versions at each place
// by digest, checks clean, answers Line and finds a fork against such a
// place as before, and grows in this layout with no upgrade step: a place
// a version is added at is written again by vseq, naming both, and the
// places not written to stay as they were.
func TestLayout12LinesReadAndGrow(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("layout 12 lines")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	v0 := mustV(t)(w.First("app.chat", "0"))
	v1 := mustV(t)(w.First("app.chat", "1"))
	v2 := mustV(t)(w.First("app.chat", "2"))
	kv := keepKV{memory.Open(nil)}
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	admitAll(t, s, v0, v1, v2)
	s.Close()
	if d, v := lineForms(t, kv); d != 0 || v != 3 {
		t.Fatalf("this layout wrote %d line places by digest and %d by vseq, want 0 and 3", d, v)
	}
	if err := engine.Layout12(kv, 12); err != nil {
		t.Fatal(err)
	}
	if d, v := lineForms(t, kv); d != 3 || v != 0 {
		t.Fatalf("the layout 12 store has %d line places by digest and %d by vseq, want 3 and 0", d, v)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != 12 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}

	s, err = engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check of the layout 12 store: %v %v", probs, err)
	}
	line := func(n int64) []string {
		t.Helper()
		ids, err := s.Line(ctx, sp, w.Key.DID(), "app.chat", n)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		return ids
	}
	if got := line(1); !slices.Equal(got, []string{v1.ID}) {
		t.Fatalf("place 1 of the layout 12 store: %v", got)
	}
	// Another version at place 1: a fork against the digest-form place,
	// which is then written by vseq, naming both.
	w.Fork("app.chat")
	w.Fork("app.chat")
	v1b := mustV(t)(w.First("app.chat", "1 again"))
	if v1b.Log == nil || v1b.Log.N != 1 {
		t.Fatalf("the forked version's log: %+v", v1b.Log)
	}
	admitAll(t, s, v1b)
	proofs, err := s.LineProofs(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(proofs) != 1 || proofs[0].Kind != "fork" || proofs[0].From() != 1 {
		t.Fatalf("proofs %+v", proofs)
	}
	want := []string{v1.ID, v1b.ID}
	slices.Sort(want)
	if got := line(1); !slices.Equal(got, want) {
		t.Fatalf("place 1 grown: %v, want %v", got, want)
	}
	if got := line(2); !slices.Equal(got, []string{v2.ID}) {
		t.Fatalf("place 2, as layout 12 wrote it: %v", got)
	}
	if d, v := lineForms(t, kv); d != 2 || v != 1 {
		t.Fatalf("the grown store has %d line places by digest and %d by vseq, want 2 and 1", d, v)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("the layout 12 store written to is in layout %d", state[0])
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check of the grown store: %v %v", probs, err)
	}
	// A third version at place 1, against the place now by vseq: a
	// proof against each of the two there, and the place names all three.
	w.Fork("app.chat")
	v1c := mustV(t)(w.First("app.chat", "1 once more"))
	admitAll(t, s, v1c)
	if proofs, err := s.LineProofs(ctx, sp); err != nil || len(proofs) != 3 {
		t.Fatalf("proofs after a fork against a place by vseq: %d %v", len(proofs), err)
	}
	want = append(want, v1c.ID)
	slices.Sort(want)
	if got := line(1); !slices.Equal(got, want) {
		t.Fatalf("place 1 grown again: %v, want %v", got, want)
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check of the store grown again: %v %v", probs, err)
	}
}
