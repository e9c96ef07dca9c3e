package engine_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
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

// VersionsStored answers as VersionJSON does whether the versions asked
// lie side by side in the store (read by stepping through their span),
// far apart (read by seeks), or both in one group, in any order of the
// two; each once, in the order the store keeps them.
func TestVersionsStoredRunsAndSeeks(t *testing.T) {
	ctx := context.Background()
	s, all := askedStore(t, "runs", enginetest.CorpusOptions{Versions: 600, Seed: 7}, 600, 1)
	picks := map[string]func(i int) bool{
		"side by side": func(i int) bool { return true },
		"far apart":    func(i int) bool { return i%40 == 0 },
		"both": func(i int) bool {
			return i < 60 || i%25 == 0 || (i >= 200 && i < 300 && i%3 == 0) || (i >= 400 && i < 403)
		},
	}
	for name, pick := range picks {
		var ids []canonical.ID
		for i, d := range all {
			if pick(i) {
				ids = append(ids, d)
			}
		}
		for _, budget := range []int{0, 3000, 1 << 20} {
			var got []int
			var order []uint64
			err := s.VersionsStored(ctx, ids, budget, func(i int, raw []byte) error {
				one, err := s.VersionJSON(ctx, ids[i])
				if err != nil || !bytes.Equal(one, raw) {
					t.Errorf("%s, budget %d, id %d: %.60s, VersionJSON says %.60s (%v)", name, budget, i, raw, one, err)
				}
				got = append(got, i)
				vseq, err := engine.VseqOf(s, ids[i])
				if err != nil {
					t.Errorf("%s: id %d: %v", name, i, err)
				}
				order = append(order, vseq)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSorted(order) {
				t.Errorf("%s, budget %d: not in the order the store keeps them: %v", name, budget, order)
			}
			slices.Sort(got)
			for i := range ids {
				if i >= len(got) || got[i] != i {
					t.Fatalf("%s, budget %d: answered %v, want each of the %d asked once", name, budget, got, len(ids))
				}
			}
			if len(got) != len(ids) {
				t.Fatalf("%s, budget %d: answered %d, want %d", name, budget, len(got), len(ids))
			}
		}
	}
}
