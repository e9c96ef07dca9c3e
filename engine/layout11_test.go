package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// rootKeys counts the entries of the index by root whose key ends in a
// 32-byte digest (as layout 11 and before wrote them) and the others.
func rootKeys(t *testing.T, kv engine.KV) (byDigest, byVseq int) {
	t.Helper()
	it, err := kv.NewIter([]byte{'a'}, []byte{'a' + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.Next() {
		// 'a', the space's 33-byte tag, the root's 32-byte hash, then
		// the version.
		if len(it.Key()) == 1+33+32+32 {
			byDigest++
		} else {
			byVseq++
		}
	}
	return byDigest, byVseq
}

// A layout 11 store, whose index by root names each version by its
// digest, checks clean, lists its versions by root for a judge's
// re-judging as before, and grows in this layout with no upgrade step:
// new entries name their version by vseq, and re-judging lists the
// versions of both forms.
func TestLayout11RootsReadAndGrow(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("layout 11 roots")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	a0 := mustV(t)(w.First("app.note", "0", enginetest.Retain))
	a1 := mustV(t)(w.Next(a0, "1"))
	b0 := mustV(t)(w.First("app.note", "b"))
	kv := keepKV{memory.Open(nil)}
	s, err := engine.Open(kv, &engine.Options{Judge: &flipJudge{}})
	if err != nil {
		t.Fatal(err)
	}
	admitAll(t, s, a0, a1, b0)
	s.Close()
	if d, v := rootKeys(t, kv); d != 0 || v != 3 {
		t.Fatalf("this layout wrote %d root index entries by digest and %d by vseq, want 0 and 3", d, v)
	}
	if err := engine.Layout11(kv, 11); err != nil {
		t.Fatal(err)
	}
	if d, v := rootKeys(t, kv); d != 3 || v != 0 {
		t.Fatalf("the layout 11 store has %d root index entries by digest and %d by vseq, want 3 and 0", d, v)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != 11 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}

	j := &flipJudge{}
	s, err = engine.Open(kv, &engine.Options{Judge: j})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check of the layout 11 store: %v %v", probs, err)
	}
	c1 := mustV(t)(w.First("ctl", ctlBody([]string{a1.ID}, nil)))
	outs := admitAll(t, s, c1)
	if outs[0].Verdict != engine.Stands {
		t.Fatalf("the control version: %v", outs[0].Verdict)
	}
	var got []string
	for _, d := range j.byRoot[w.Key.DID()] {
		got = append(got, d.String())
	}
	want := []string{a0.ID, a1.ID, b0.ID, c1.ID}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ByRoot listed %v, want %v", got, want)
	}
	if got := currentOf(t, s, sp, a0.Key); got != a0.ID {
		t.Fatalf("a1 withdrawn through the layout 11 entries: the retained a0 reads, got %q", got)
	}
	if d, v := rootKeys(t, kv); d != 3 || v != 1 {
		t.Fatalf("the grown store has %d root index entries by digest and %d by vseq, want 3 and 1", d, v)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("the layout 11 store written to is in layout %d", state[0])
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check of the grown store: %v %v", probs, err)
	}
	// Each form names its version: an id read back through either is the
	// version's own.
	for _, v := range []string{a0.ID, c1.ID} {
		d, err := canonical.ParseID(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Version(ctx, d); err != nil {
			t.Fatalf("version %s: %v", v, err)
		}
	}
}
