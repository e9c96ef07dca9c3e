package engine_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/minca-go/minca/engine/enginetest"
)

// VersionsStored answers exactly what VersionJSON answers for each id
// asked (stubs as stubs, current versions from their heads, repeats
// again, what is not held skipped), each once, whatever its budget.
func TestVersionsStoredAsVersionJSON(t *testing.T) {
	ctx := context.Background()
	s, ids := askedStore(t, "stored", enginetest.CorpusOptions{Versions: 600, Seed: 5}, 500, 2, 5, 40, 1, 5)
	var want []int
	for i, d := range ids {
		if _, err := s.VersionJSON(ctx, d); err == nil {
			want = append(want, i)
		}
	}
	if len(want) == 0 || len(want) == len(ids) {
		t.Fatalf("the ids asked: %d held of %d; want some of each", len(want), len(ids))
	}
	for _, budget := range []int{0, 1, 2000, 1 << 20} {
		var got []int
		err := s.VersionsStored(ctx, ids, budget, func(i int, raw []byte) error {
			one, err := s.VersionJSON(ctx, ids[i])
			if err != nil || !bytes.Equal(one, raw) {
				t.Errorf("budget %d, id %d: %s, VersionJSON says %s (%v)", budget, i, raw, one, err)
			}
			got = append(got, i)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("budget %d: answered %v, want %v", budget, got, want)
		}
	}
}
