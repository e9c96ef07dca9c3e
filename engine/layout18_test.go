package engine_test

import (
	"context"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// A layout 17 store, whose records' history entries are under their keys
// and whose heads name no number, reads and checks clean as it is, and
// tells each record's history, standings and current version as a store
// written whole in this layout does. Grown in this layout with no upgrade
// step, each record first stored takes the next number, its head naming
// it and its entries under it, one number a record, never one given
// before (a reopened store goes on from the last); a record stored before
// keeps its entries under its key, its new versions' and changed
// standings' included. The store checks clean at every step and reads as
// a new one told the same.
func TestLayout18HistoryByNumber(t *testing.T) {
	ctx := context.Background()
	space := enginetest.SpaceID("layout 18")
	vs := enginetest.CorpusVersions(t, space, enginetest.CorpusOptions{Versions: 400, Seed: 18})
	half, threeQuarters := len(vs)/2, 3*len(vs)/4
	// firsts lists the records in the order their first versions come.
	var firsts []*record.Version
	first := map[string]int{} // record key → the index of its first version
	for i, v := range vs {
		if _, ok := first[v.Key]; !ok {
			first[v.Key] = i
			firsts = append(firsts, v)
		}
	}
	same := func(s, ref *engine.Store, when string) {
		t.Helper()
		for _, v := range firsts {
			if got, want := historyText(t, s, v), historyText(t, ref, v); got != want {
				t.Fatalf("%s, record %s:\n%s\nwant\n%s", when, v.Key, got, want)
			}
		}
		checksClean(t, s, when)
	}
	// numbers checks the records' numbers: those whose first version
	// came at or after from are numbered, one after another in that
	// order from after, the rest not; it returns the last.
	numbers := func(kv engine.KV, upTo, from int, after uint64) uint64 {
		t.Helper()
		next := after
		for _, v := range firsts {
			i := first[v.Key]
			if i >= upTo {
				break
			}
			num, err := engine.RecNum(kv, v.Space, v.Key)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case i < from && num != 0:
				t.Fatalf("record %s, stored before the store was layout 18, has number %d", v.Key, num)
			case i >= from && num != next+1:
				t.Fatalf("record %s has number %d, want %d", v.Key, num, next+1)
			case i >= from:
				next = num
			}
		}
		return next
	}

	kv := keepKV{memory.Open(nil)}
	s := openJudged(t, kv)
	ref := openJudged(t, keepKV{memory.Open(nil)})
	defer ref.Close()
	admitAll(t, s, vs[:half]...)
	admitAll(t, ref, vs[:half]...)
	s.Close()
	if heads, entries := histNumForms(t, kv); heads != len(first)-countFrom(first, half) || entries != half {
		t.Fatalf("this layout: %d heads naming a number, %d entries under one; want %d, %d", heads, entries, len(first)-countFrom(first, half), half)
	}
	if err := engine.Layout17(kv, 17); err != nil {
		t.Fatal(err)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != 17 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}
	if heads, entries := histNumForms(t, kv); heads != 0 || entries != 0 {
		t.Fatalf("the layout 17 store: %d heads naming a number, %d entries under one; want none", heads, entries)
	}
	if byID, byVseq, err := engine.HistoryForms(kv); err != nil || byID != 0 || byVseq != half {
		t.Fatalf("the layout 17 store: %d entries by id, %d by vseq (%v); want 0, %d", byID, byVseq, err, half)
	}

	s = openJudged(t, kv)
	same(s, ref, "the layout 17 store")
	// A record stored before is written to (a new version, a standing
	// changed), and records first stored now are numbered.
	admitAll(t, s, vs[half:threeQuarters]...)
	admitAll(t, ref, vs[half:threeQuarters]...)
	same(s, ref, "grown")
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("the layout 17 store written to is in layout %d", state[0])
	}
	last := numbers(kv, threeQuarters, half, 0)
	if last == 0 {
		t.Fatal("no record was first stored in the second quarter")
	}
	for _, v := range []*record.Version{vs[0], vs[threeQuarters-1]} {
		for _, st := range []*engine.Store{s, ref} {
			if err := st.SetStanding(ctx, enginetest.Digest(v), engine.Withdrawn); err != nil {
				t.Fatal(err)
			}
		}
	}
	same(s, ref, "standings changed")
	s.Close()

	// Reopened, the store goes on from the last number given.
	s = openJudged(t, kv)
	defer s.Close()
	same(s, ref, "reopened")
	admitAll(t, s, vs[threeQuarters:]...)
	admitAll(t, ref, vs[threeQuarters:]...)
	for _, st := range []*engine.Store{s, ref} {
		if err := st.SetStanding(ctx, enginetest.Digest(vs[0]), engine.Stands); err != nil {
			t.Fatal(err)
		}
	}
	same(s, ref, "grown again")
	if got := numbers(kv, len(vs), half, 0); got <= last {
		t.Fatalf("after reopening, the last number is %d, before %d", got, last)
	}
	byID, byVseq, err := engine.HistoryForms(kv)
	_, entries := histNumForms(t, kv)
	old := 0
	for _, v := range vs {
		if first[v.Key] < half {
			old++
		}
	}
	if err != nil || byID != 0 || byVseq != len(vs) || entries != len(vs)-old {
		t.Fatalf("grown: %d entries by id, %d by vseq, %d under a number (%v); want 0, %d, %d", byID, byVseq, entries, err, len(vs), len(vs)-old)
	}
}

// countFrom counts the records whose first version comes at or after i.
func countFrom(first map[string]int, i int) int {
	n := 0
	for _, at := range first {
		if at >= i {
			n++
		}
	}
	return n
}

func histNumForms(t *testing.T, kv engine.KV) (heads, entries int) {
	t.Helper()
	heads, entries, err := engine.HistNumForms(kv)
	if err != nil {
		t.Fatal(err)
	}
	return heads, entries
}
