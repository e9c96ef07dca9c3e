package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// Check verifies versions on every core, in chunks, and still lists the
// problems in the order of the id table and counts every version once:
// a store of more versions than several chunks, with the sync-order entry
// of some removed, names exactly those, in digest order.
func TestCheckInOrderAcrossChunks(t *testing.T) {
	ctx := context.Background()
	vs := enginetest.CorpusVersions(t, enginetest.SpaceID("check"), enginetest.CorpusOptions{Versions: 1500, Seed: 5})
	kv := memory.Open(nil)
	s, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Admit(ctx, "p", vs); err != nil {
		t.Fatal(err)
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) > 0 {
		t.Fatalf("check of a sound store: %v %v", probs, err)
	}
	b, err := kv.NewBatch()
	if err != nil {
		t.Fatal(err)
	}
	var damaged []canonical.ID
	for i := 7; i < len(vs); i += 97 {
		d, ok := keys.ParseExact(vs[i].ID)
		if !ok {
			t.Fatalf("id %s", vs[i].ID)
		}
		if err := b.Delete(keys.OrderKey(vs[i].Space, record.UnixMillis(vs[i].CreatedAt), d)); err != nil {
			t.Fatal(err)
		}
		damaged = append(damaged, d)
	}
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(damaged, func(a, b canonical.ID) int { return slices.Compare(a[:], b[:]) })
	var want []string
	for _, d := range damaged {
		want = append(want, fmt.Sprintf("version %s: missing from the sync order", d))
	}
	got, err := s.Check(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The order pass then finds the same entries missing from its side.
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("check found\n%q\nwant first\n%q", got, want)
	}
	for _, p := range got {
		if len(p) > 9 && p[:9] == "counters:" {
			t.Errorf("a version counted more or less than once: %s", p)
		}
	}
}
