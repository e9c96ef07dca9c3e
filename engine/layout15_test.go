package engine_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// A layout 15 store, whose records' heads hold their current versions'
// values (each 'v' a marker naming the record), reads, answers a peer's
// WANT and checks clean as it is, and grows in this layout with no
// upgrade step: each head the store writes again names its value, moved
// to 'c' (or back to 'v' when superseded), and the grown store reads as a
// new one given the same versions.
func TestLayout15HeadsReadAndGrow(t *testing.T) {
	ctx := context.Background()
	space := enginetest.SpaceID("layout 15")
	vs := enginetest.CorpusVersions(t, space, enginetest.CorpusOptions{Versions: 400, Seed: 15})
	half := len(vs) / 2
	// reads is what a store answers for every version: each record's
	// current version, each version by id, and each by a WANT of them all
	// (VersionsStored, in groups small enough that heads and values are
	// read in many).
	reads := func(s *engine.Store) map[string]string {
		out := map[string]string{}
		ids := make([]canonical.ID, len(vs))
		for i, v := range vs {
			b, err := s.CurrentJSON(ctx, v.Space, v.Key)
			if err != nil && !errors.Is(err, engine.ErrNotFound) {
				t.Fatal(err)
			}
			out["current "+v.Key] = string(b)
			if ids[i], err = canonical.ParseID(v.ID); err != nil {
				t.Fatal(err)
			}
			b, err = s.VersionJSON(ctx, ids[i])
			if err != nil && !errors.Is(err, engine.ErrNotFound) {
				t.Fatal(err)
			}
			out["id "+v.ID] = string(b)
		}
		err := s.VersionsStored(ctx, ids, 4<<10, func(i int, raw []byte) error {
			out["want "+vs[i].ID] = string(raw)
			if out["id "+vs[i].ID] != string(raw) {
				t.Errorf("version %s: a WANT reads %q, VersionJSON %q", vs[i].ID, raw, out["id "+vs[i].ID])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// forms is valueForms, the marks and values in 'c' checked to be one
	// for each head naming its current version's value.
	forms := func(kv engine.KV) (holding, naming, marked int) {
		t.Helper()
		holding, naming, marked, marks, cur := valueForms(t, kv)
		if marks != naming || cur != naming {
			t.Fatalf("%d heads name their current version's value, %d 'v' values mark one in 'c', %d are in 'c': want all three equal", naming, marks, cur)
		}
		return holding, naming, marked
	}

	kv := keepKV{memory.Open(nil)}
	s := openJudged(t, kv)
	admitAll(t, s, vs[:half]...)
	before := reads(s)
	s.Close()
	hold, name, marked := forms(kv)
	if hold != 0 || name == 0 || marked != 0 {
		t.Fatalf("this layout wrote %d heads holding a value, %d naming one, %d markers; want 0, some, 0", hold, name, marked)
	}
	if err := engine.Layout15(kv, 15); err != nil {
		t.Fatal(err)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != 15 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}
	hold15, name15, marked15 := forms(kv)
	if hold15 != name || name15 != 0 || marked15 != name {
		t.Fatalf("the layout 15 store has %d heads holding a value, %d naming one, %d markers; want %d, 0, %d", hold15, name15, marked15, name, name)
	}

	s = openJudged(t, kv)
	if got := reads(s); !maps.Equal(got, before) {
		t.Fatal("a layout 15 store reads otherwise")
	}
	checksClean(t, s, "layout 15")
	admitAll(t, s, vs[half:]...)
	checksClean(t, s, "grown")
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("a layout 15 store written to is in layout %d", state[0])
	}
	hold, name, marked = forms(kv)
	if hold > hold15 || hold != marked || name == 0 {
		t.Fatalf("grown: %d heads holding a value (of %d), %d naming one, %d markers: a head written in the old form, or a marker left without its head", hold, hold15, name, marked)
	}

	fresh := openJudged(t, keepKV{memory.Open(nil)})
	defer fresh.Close()
	admitAll(t, fresh, vs...)
	if got, want := reads(s), reads(fresh); !maps.Equal(got, want) {
		t.Fatal("the grown layout 15 store reads otherwise than a new one")
	}
	s.Close()
	s = openJudged(t, kv)
	defer s.Close()
	if got, want := reads(s), reads(fresh); !maps.Equal(got, want) {
		t.Fatal("the grown store reopened reads otherwise")
	}
	checksClean(t, s, "reopened")
}

// A record whose current version a layout 15 head holds changes standing
// (its current version withdrawn, an earlier retained one reading
// again): the head is written in this layout, the withdrawn version's
// value given back to 'v', the one reading now moved to 'c', and the store
// checks clean.
func TestLayout15HeadStandingChanges(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("layout 15 standing")
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
	if err := engine.Layout15(kv, 15); err != nil {
		t.Fatal(err)
	}
	s, err = engine.Open(kv, &engine.Options{Judge: &flipJudge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := currentOf(t, s, sp, a0.Key); got != a1.ID {
		t.Fatalf("the layout 15 store reads %q, want a1", got)
	}
	c1 := mustV(t)(w.First("ctl", ctlBody([]string{a1.ID}, nil)))
	if outs := admitAll(t, s, c1); outs[0].Verdict != engine.Stands {
		t.Fatalf("the control version: %v", outs[0].Verdict)
	}
	if got := currentOf(t, s, sp, a0.Key); got != a0.ID {
		t.Fatalf("a1 withdrawn: the retained a0 reads, got %q", got)
	}
	if got := currentOf(t, s, sp, b0.Key); got != b0.ID {
		t.Fatalf("b, untouched, reads %q", got)
	}
	if hold, _, err := engine.HeadForms(kv); err != nil || hold != 1 {
		t.Fatalf("%d heads hold a value (%v), want b's alone", hold, err)
	}
	// b edited: b0, whose head held it, is superseded and demoted.
	b1 := mustV(t)(w.Next(b0, "b1"))
	if outs := admitAll(t, s, b1); outs[0].Verdict != engine.Stands || outs[0].Stored != engine.Whole {
		t.Fatalf("b1: %+v", outs[0])
	}
	if got := currentOf(t, s, sp, b0.Key); got != b1.ID {
		t.Fatalf("b edited reads %q", got)
	}
	for _, v := range []string{a0.ID, a1.ID, b0.ID, b1.ID} {
		d, err := canonical.ParseID(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Version(ctx, d); err != nil {
			t.Fatalf("version %s: %v", v, err)
		}
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
	hold, _, marked := func() (int, int, int) {
		h, n, m, marks, cur := valueForms(t, kv)
		if n != 3 || marks != 3 || cur != 3 {
			t.Fatalf("three records (a, b and the control's): %d heads name their current version, %d 'v' values mark one in 'c', %d are in 'c'", n, marks, cur)
		}
		return h, n, m
	}()
	if hold != 0 || marked != 0 {
		t.Fatalf("every head written again: %d still hold a value, %d values are markers", hold, marked)
	}
	d, err := canonical.ParseID(b0.ID)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := s.VersionJSON(ctx, d); err != nil || string(raw) == "" {
		t.Fatalf("b0 superseded: %q %v", raw, err)
	} else if v, err := s.Version(ctx, d); err != nil || v.HasBody {
		t.Fatalf("b0 superseded, not retained, is kept whole (02 §4.5): %v", err)
	}
}

// valueForms counts heads holding a value and naming one, 'v' markers
// naming a record and marks of a value in 'c', and values in 'c'.
func valueForms(t *testing.T, kv engine.KV) (holding, naming, markers, marks, current int) {
	t.Helper()
	holding, naming, err := engine.HeadForms(kv)
	if err != nil {
		t.Fatal(err)
	}
	markers, marks, err = engine.MarkedValues(kv)
	if err != nil {
		t.Fatal(err)
	}
	current, err = engine.CurrentValues(kv)
	if err != nil {
		t.Fatal(err)
	}
	return holding, naming, markers, marks, current
}
