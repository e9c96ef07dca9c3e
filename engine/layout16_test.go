package engine_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// orderForms counts the sync-order entries naming their version's vseq
// (this layout's) and those holding the collection alone (layout 16's).
func orderForms(t *testing.T, kv engine.KV) (placed, bare int) {
	t.Helper()
	err := engine.EachInFamily(kv, keys.Order, func(_, v []byte) error {
		if len(v) > 0 && v[0] == 0xFF {
			placed++
		} else {
			bare++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return placed, bare
}

// syncOrderOf is a space's sync order as SyncOrder yields it.
func syncOrderOf(t *testing.T, s *engine.Store, space string) []engine.SyncItem {
	t.Helper()
	var items []engine.SyncItem
	for it, err := range s.SyncOrder(context.Background(), space, engine.SyncKey{}) {
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	return items
}

// A layout 16 store, whose sync-order entries hold the collection alone,
// reads, syncs and checks clean as it is: SyncOrder gives no vseq for its
// entries (0), and a WANT told those (none) reads every version by id as
// before. Grown in this layout, the new entries name their versions'
// vseqs, each the one its id entry names, and a WANT told them reads the
// same versions as one looking every id up; the store checks clean
// throughout and reads as a new one given the same versions.
func TestLayout16OrderReadAndGrows(t *testing.T) {
	ctx := context.Background()
	space := enginetest.SpaceID("layout 16")
	vs := enginetest.CorpusVersions(t, space, enginetest.CorpusOptions{Versions: 400, Seed: 16})
	half := len(vs) / 2
	ids := make([]canonical.ID, len(vs))
	for i, v := range vs {
		var err error
		if ids[i], err = canonical.ParseID(v.ID); err != nil {
			t.Fatal(err)
		}
	}
	// reads is what a WANT of every version reads, told where the sync
	// order says each is (at) and not (by id), which must agree.
	reads := func(s *engine.Store) map[string]string {
		t.Helper()
		place := map[canonical.ID]uint64{}
		for _, it := range syncOrderOf(t, s, space) {
			place[it.Digest] = it.Vseq
		}
		at := make([]uint64, len(ids))
		for i, d := range ids {
			at[i] = place[d]
		}
		byID, told := map[string]string{}, map[string]string{}
		if err := s.VersionsStored(ctx, ids, 4<<10, func(i int, raw []byte) error {
			byID[vs[i].ID] = string(raw)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.VersionsStoredAt(ctx, ids, at, 4<<10, func(i int, raw []byte) error {
			told[vs[i].ID] = string(raw)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(byID, told) {
			t.Fatalf("a WANT told where versions are reads %d versions, one looking them up %d, not the same", len(told), len(byID))
		}
		for i, v := range vs {
			b, err := s.VersionJSON(ctx, ids[i])
			if errors.Is(err, engine.ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if byID[v.ID] != string(b) {
				t.Fatalf("version %s: a WANT reads %q, VersionJSON %q", v.ID, byID[v.ID], b)
			}
		}
		return byID
	}
	// placesTrue checks every vseq the sync order gives against the id
	// entry's, and returns how many it gave.
	placesTrue := func(s *engine.Store) int {
		t.Helper()
		n := 0
		for _, it := range syncOrderOf(t, s, space) {
			if it.Vseq == 0 {
				continue
			}
			n++
			want, err := s.VersionJSON(ctx, it.Digest)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			if err := s.VersionsStoredAt(ctx, []canonical.ID{it.Digest}, []uint64{it.Vseq}, 1, func(_ int, raw []byte) error {
				got = append(got, raw...)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("version %s: the sync order names vseq %d, which holds another version", it.Digest, it.Vseq)
			}
		}
		return n
	}

	kv := keepKV{memory.Open(nil)}
	s := openJudged(t, kv)
	admitAll(t, s, vs[:half]...)
	before := reads(s)
	s.Close()
	if placed, bare := orderForms(t, kv); placed == 0 || bare != 0 {
		t.Fatalf("this layout wrote %d sync-order entries naming a vseq, %d without; want some, 0", placed, bare)
	}
	if err := engine.Layout16(kv, 16); err != nil {
		t.Fatal(err)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != 16 {
		t.Fatalf("the store made for the test is in layout %d", state[0])
	}
	placed16, bare16 := orderForms(t, kv)
	if placed16 != 0 || bare16 == 0 {
		t.Fatalf("the layout 16 store has %d sync-order entries naming a vseq, %d without; want 0, some", placed16, bare16)
	}

	s = openJudged(t, kv)
	if n := placesTrue(s); n != 0 {
		t.Fatalf("a layout 16 store's sync order gives %d vseqs, want none", n)
	}
	if got := reads(s); !maps.Equal(got, before) {
		t.Fatal("a layout 16 store reads otherwise")
	}
	checksClean(t, s, "layout 16")
	admitAll(t, s, vs[half:]...)
	checksClean(t, s, "grown")
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("a layout 16 store written to is in layout %d", state[0])
	}
	placed, bare := orderForms(t, kv)
	if bare != bare16 || placed == 0 {
		t.Fatalf("grown: %d sync-order entries naming a vseq, %d without (of %d): want the new ones naming theirs, the old ones as they were", placed, bare, bare16)
	}
	if n := placesTrue(s); n != placed {
		t.Fatalf("the grown store's sync order gives %d vseqs, its entries name %d", n, placed)
	}

	fresh := openJudged(t, keepKV{memory.Open(nil)})
	defer fresh.Close()
	admitAll(t, fresh, vs...)
	if got, want := reads(s), reads(fresh); !maps.Equal(got, want) {
		t.Fatal("the grown layout 16 store reads otherwise than a new one")
	}
	s.Close()
	s = openJudged(t, kv)
	defer s.Close()
	if got, want := reads(s), reads(fresh); !maps.Equal(got, want) {
		t.Fatal("the grown store reopened reads otherwise")
	}
	checksClean(t, s, "reopened")
}

// Check names a sync-order entry whose vseq is not its version's, and
// one whose value is of neither form; an entry of layout 16's form beside
// this layout's is no problem.
func TestCheckNamesAWrongOrderVseq(t *testing.T) {
	ctx := context.Background()
	space := enginetest.SpaceID("order vseq")
	vs := enginetest.CorpusVersions(t, space, enginetest.CorpusOptions{Versions: 60, Seed: 17})
	key := func(v *record.Version) []byte {
		d, ok := keys.ParseExact(v.ID)
		if !ok {
			t.Fatalf("id %s", v.ID)
		}
		return keys.OrderKey(v.Space, record.UnixMillis(v.CreatedAt), d)
	}
	for _, c := range []struct {
		name string
		// do damages the entry of v, the version at vseq; the problem
		// must hold want, "" for none.
		do   func(v *record.Version, vseq uint64) []byte
		want string
	}{
		{"another version's vseq", func(v *record.Version, vseq uint64) []byte { return engine.OrderValue(vseq+1, v.Collection) }, "names the value at"},
		{"no vseq", func(v *record.Version, vseq uint64) []byte { return engine.OrderValue(0, v.Collection) }, "bad value"},
		{"short", func(v *record.Version, vseq uint64) []byte { return []byte{0xFF, 1, 2} }, "bad value"},
		{"another collection", func(v *record.Version, vseq uint64) []byte { return engine.OrderValue(vseq, "elsewhere") }, "does not match the version"},
		{"layout 16's form", func(v *record.Version, vseq uint64) []byte { return []byte(v.Collection) }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			kv := keepKV{memory.Open(nil)}
			s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			admitAll(t, s, vs...)
			v := vs[30]
			var vseq uint64
			for _, it := range syncOrderOf(t, s, space) {
				if it.Digest.String() == v.ID {
					vseq = it.Vseq
				}
			}
			if vseq == 0 {
				t.Fatalf("version %s: no vseq in the sync order", v.ID)
			}
			b, err := kv.NewBatch()
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Set(key(v), c.do(v, vseq)); err != nil {
				t.Fatal(err)
			}
			if err := b.Commit(engine.Sync); err != nil {
				t.Fatal(err)
			}
			probs, err := s.Check(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if len(probs) != 0 {
					t.Fatalf("problems %v, want none", probs)
				}
				return
			}
			if len(probs) != 1 || !strings.Contains(fmt.Sprint(probs[0]), c.want) || !strings.Contains(fmt.Sprint(probs[0]), v.ID) {
				t.Fatalf("problems %v, want one naming %s: %q", probs, v.ID, c.want)
			}
		})
	}
}
