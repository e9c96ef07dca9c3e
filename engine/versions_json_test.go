package engine_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// VersionsJSON answers, in the order asked, exactly what VersionJSON
// answers for each id: stubs as stubs, repeats again, what is not held
// skipped.
func TestVersionsJSONAsVersionJSON(t *testing.T) {
	ctx := context.Background()
	s, ids := askedStore(t, "many", enginetest.CorpusOptions{Versions: 300, Seed: 3}, 250, 3, 5, 40, 1)
	var want []int
	stubs := 0
	for i, d := range ids {
		raw, err := s.VersionJSON(ctx, d)
		if err == nil {
			want = append(want, i)
			if v, err := record.Decode(raw); err == nil && v.IsStub() {
				stubs++
			}
		}
	}
	if stubs == 0 || len(want) == 0 || len(want) == len(ids) {
		t.Fatalf("the ids asked: %d held of %d, %d stubs; want some of each", len(want), len(ids), stubs)
	}
	var got []int
	err := s.VersionsJSON(ctx, ids, func(i int, raw []byte) error {
		one, err := s.VersionJSON(ctx, ids[i])
		if err != nil || !bytes.Equal(one, raw) {
			t.Errorf("id %d: %s, VersionJSON says %s (%v)", i, raw, one, err)
		}
		got = append(got, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("answered %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("answered %v, want %v", got, want)
		}
	}
}

// askedStore is a memory store holding the first held of a corpus's
// versions, and the ids a peer might ask of it: every step-th version,
// newest first (held and not), then those at the places repeat names
// again.
func askedStore(t *testing.T, space string, corpus enginetest.CorpusOptions, held, step int, repeat ...int) (*engine.Store, []canonical.ID) {
	t.Helper()
	vs := enginetest.CorpusVersions(t, enginetest.SpaceID(space), corpus)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Admit(context.Background(), "p", vs[:held]); err != nil {
		t.Fatal(err)
	}
	var ids []canonical.ID
	for i := len(vs) - 1; i >= 0; i -= step {
		d, err := canonical.ParseID(vs[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d)
	}
	for _, r := range repeat {
		ids = append(ids, ids[r])
	}
	return s, ids
}
