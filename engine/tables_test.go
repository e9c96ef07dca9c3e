package engine_test

import (
	"context"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// Tables counts every key of the store once, under its table, with the
// record heads apart from the history entries.
func TestTables(t *testing.T) {
	ctx := context.Background()
	kv := memory.Open(nil)
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	vs := enginetest.CorpusVersions(t, enginetest.SpaceID("tables"), enginetest.CorpusOptions{Versions: 60, Seed: 1})
	if _, err := s.Admit(ctx, "peer", vs); err != nil {
		t.Fatal(err)
	}
	tables, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want engine.TableBytes
	it, _ := kv.NewIter(nil, nil)
	for it.Next() {
		want.Entries++
		want.KeyBytes += int64(len(it.Key()))
		want.ValueBytes += int64(len(it.Value()))
	}
	it.Close()
	var got engine.TableBytes
	by := map[string]engine.TableBytes{}
	for _, tb := range tables {
		if _, twice := by[tb.Table]; twice {
			t.Fatalf("table %q listed twice: %v", tb.Table, tables)
		}
		by[tb.Table] = tb
		got.Entries += tb.Entries
		got.KeyBytes += tb.KeyBytes
		got.ValueBytes += tb.ValueBytes
	}
	if got != want {
		t.Fatalf("tables sum to %+v, the store holds %+v", got, want)
	}
	st, _ := s.Stats(ctx)
	if by["e"].Entries != st.Versions || by["v"].Entries != st.Versions {
		t.Fatalf("%d versions, 'e' %d, 'v' %d", st.Versions, by["e"].Entries, by["v"].Entries)
	}
	if heads, hist := by["h heads"].Entries, by["H"].Entries; heads == 0 || by["h"].Entries != 0 || hist != st.Versions {
		t.Fatalf("heads %d, history entries %d, versions %d", heads, hist, st.Versions)
	}
}
