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
	"github.com/minca-go/minca/record"
)

// A layout 10 store, which keeps the value of each record's current
// version in 'v' as well as in the record's head, reads as it did, checks
// clean, and grows in this layout with no upgrade step: each record's
// duplicate goes when the record next changes, and the store then reads
// what a store of this layout given the same versions reads.
func TestLayout10StoreReadsAndGrows(t *testing.T) {
	ctx := context.Background()
	space := enginetest.SpaceID("layout 10")
	vs := enginetest.CorpusVersions(t, space, enginetest.CorpusOptions{Versions: 400, Seed: 9})
	half := len(vs) / 2
	// reads is what a store answers for every version: each record's
	// current version, and each version by id.
	reads := func(s *engine.Store) map[string]string {
		out := map[string]string{}
		for _, v := range vs {
			b, err := s.CurrentJSON(ctx, v.Space, v.Key)
			if err != nil && !errors.Is(err, engine.ErrNotFound) {
				t.Fatal(err)
			}
			out["current "+v.Key] = string(b)
			id, err := canonical.ParseID(v.ID)
			if err != nil {
				t.Fatal(err)
			}
			b, err = s.VersionJSON(ctx, id)
			if err != nil && !errors.Is(err, engine.ErrNotFound) {
				t.Fatal(err)
			}
			out["id "+v.ID] = string(b)
		}
		return out
	}
	// valueBytes is the bytes of version values and record heads: a
	// current version's value is kept once in this layout (in 'c') and
	// twice in layout 10 (in 'v' and in its head).
	valueBytes := func(s *engine.Store) int64 {
		tables, err := s.Tables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		found := 0
		for _, tb := range tables {
			if tb.Table == "v" || tb.Table == "c" || tb.Table == "h heads" {
				n += tb.ValueBytes
				found++
			}
		}
		if found < 2 {
			t.Fatal("no version values or heads in the store's tables")
		}
		return n
	}

	kv := keepKV{memory.Open(nil)}
	s := openJudged(t, kv)
	admitAll(t, s, vs[:half]...)
	before, small := reads(s), valueBytes(s)
	s.Close()
	if err := engine.Layout10(kv); err != nil {
		t.Fatal(err)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != 10 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}
	s = openJudged(t, kv)
	if big := valueBytes(s); big < small+int64(half/4)*200 {
		t.Fatalf("the layout 10 store holds %d bytes of version values, this layout %d: no duplicates", big, small)
	}
	if got := reads(s); !maps.Equal(got, before) {
		t.Fatal("a layout 10 store reads otherwise")
	}
	checksClean(t, s, "layout 10")
	admitAll(t, s, vs[half:]...)
	checksClean(t, s, "grown")
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout {
		t.Fatalf("a layout 10 store written to is in layout %d", state[0])
	}

	fresh := openJudged(t, keepKV{memory.Open(nil)})
	defer fresh.Close()
	admitAll(t, fresh, vs...)
	if got, want := reads(s), reads(fresh); !maps.Equal(got, want) {
		t.Fatal("the grown layout 10 store reads otherwise than a new one")
	}
	for _, v := range vs {
		a, _ := s.History(ctx, v.Space, v.Key)
		b, _ := fresh.History(ctx, v.Space, v.Key)
		if len(a) != len(b) {
			t.Fatalf("record %s: history of %d, a new store's %d", v.Key, len(a), len(b))
		}
	}
	s.Close()
	// Reopened, the grown store is in this layout: an engine of layout 10
	// refuses it (TestLaterLayoutRefused), and this one reads it.
	s = openJudged(t, kv)
	defer s.Close()
	if got, want := reads(s), reads(fresh); !maps.Equal(got, want) {
		t.Fatal("the grown store reopened reads otherwise")
	}
	checksClean(t, s, "reopened")
}

// A record's current version lives in its head alone, and its value by
// id points there: reading a version by id while new versions demote it,
// one after another, gets it whole or as a stub, never an error.
func TestVersionReadWhileDemoted(t *testing.T) {
	ctx := context.Background()
	space := enginetest.SpaceID("read while demoted")
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := enginetest.NewWriter(space)
	if err != nil {
		t.Fatal(err)
	}
	const edits = 300
	v, err := w.First("app.note", canonical.NewObject("n", 0.0))
	if err != nil {
		t.Fatal(err)
	}
	vs := []*record.Version{v}
	for i := 1; i < edits; i++ {
		if v, err = w.Next(v, canonical.NewObject("n", float64(i))); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	ids := make([]canonical.ID, len(vs))
	for i, v := range vs {
		if ids[i], err = canonical.ParseID(v.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Admit(ctx, "peer", vs[:1]); err != nil {
		t.Fatal(err)
	}
	stored := make(chan int, edits) // each version's index once it is stored
	stored <- 0
	done := make(chan error, 1)
	go func() {
		for i := 1; i < len(vs); i++ {
			if _, err := s.Admit(ctx, "peer", vs[i:i+1]); err != nil {
				done <- err
				return
			}
			stored <- i
		}
		done <- nil
	}()
	last, reads := 0, 0
	for finished := false; !finished; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		case last = <-stored:
		default:
		}
		b, err := s.VersionJSON(ctx, ids[last])
		if err != nil {
			t.Fatalf("read %d of version %d: %v", reads, last, err)
		}
		got, err := record.Decode(b)
		if err != nil || got.ID != vs[last].ID {
			t.Fatalf("read %d of version %d: %s, %v", reads, last, b, err)
		}
		want := ids[max(0, last-1) : last+1]
		n := 0
		err = s.VersionsJSON(ctx, want, func(i int, raw []byte) error {
			got, err := record.Decode(raw)
			if err != nil || got.ID != want[i].String() {
				t.Errorf("read %d of versions to %d: %s, %v", reads, last, raw, err)
			}
			n++
			return nil
		})
		if err != nil || n != len(want) {
			t.Fatalf("read %d of versions to %d: %d of %d, %v", reads, last, n, len(want), err)
		}
	}
	if got, _ := s.Current(ctx, v.Space, v.Key); got == nil || got.ID != vs[edits-1].ID {
		t.Fatalf("the current version at the end: %v", got)
	}
}
