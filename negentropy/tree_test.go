package negentropy_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/internal/gen"
)

// TestTreeMatchesVector inserts items into a Tree in random order and checks
// every read against a Vector of the same items.
func TestTreeMatchesVector(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 2049, 30_000} {
		for _, ts := range []gen.Timestamps{gen.Spread, gen.Equal} {
			items, _ := gen.Pair(gen.Spec{N: n, Timestamps: ts, Seed: uint64(n)})
			v, err := gen.Vector(items)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(uint64(n), 9))
			tr := negentropy.NewTree()
			for _, i := range r.Perm(n) {
				if err := tr.Insert(items[i]); err != nil {
					t.Fatal(err)
				}
			}
			built, _ := gen.Tree(items)
			for _, s := range []negentropy.Storage{tr, built} {
				checkSame(t, r, v, s, items)
			}
		}
	}
}

func checkSame(t *testing.T, r *rand.Rand, v *negentropy.Vector, s negentropy.Storage, items []negentropy.Item) {
	t.Helper()
	n := len(items)
	if s.Size() != n {
		t.Fatalf("size %d, want %d", s.Size(), n)
	}
	var got []negentropy.Item
	if err := s.Iterate(0, n, func(i int, it negentropy.Item) bool {
		if i != len(got) {
			t.Fatalf("index %d, want %d", i, len(got))
		}
		got = append(got, it)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != items[i] {
			t.Fatalf("item %d differs", i)
		}
	}
	for range 300 {
		lo := r.IntN(n + 1)
		hi := lo + r.IntN(n-lo+1)
		fw, _ := v.Fingerprint(lo, hi)
		fg, err := s.Fingerprint(lo, hi)
		if err != nil || fg != fw {
			t.Fatalf("fingerprint [%d,%d): %x, %v; want %x", lo, hi, fg, err, fw)
		}
		var b negentropy.Bound
		switch {
		case n > 0 && r.IntN(2) == 0:
			it := items[r.IntN(n)]
			b = negentropy.Bound{Item: negentropy.Item{Timestamp: it.Timestamp}, PrefixLen: r.IntN(33)}
			copy(b.Item.ID[:b.PrefixLen], it.ID[:])
		default:
			b = negentropy.Bound{Item: negentropy.Item{Timestamp: 1677970534 + uint64(r.IntN(n+2))}}
		}
		lw, _ := v.FindLowerBound(lo, hi, b)
		lg, err := s.FindLowerBound(lo, hi, b)
		if err != nil || lg != lw {
			t.Fatalf("lower bound in [%d,%d): %d, %v; want %d", lo, hi, lg, err, lw)
		}
		k := 0
		if err := s.Iterate(lo, hi, func(i int, it negentropy.Item) bool {
			if i != lo+k || it != items[i] {
				t.Fatalf("iterate [%d,%d): index %d", lo, hi, i)
			}
			k++
			return k < 5
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTreeRejects(t *testing.T) {
	tr := negentropy.NewTree()
	it := negentropy.Item{Timestamp: 5, ID: negentropy.ID{1}}
	if err := tr.Insert(it); err != nil {
		t.Fatal(err)
	}
	if err := tr.Insert(it); !errors.Is(err, negentropy.ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	if err := tr.Insert(negentropy.Item{Timestamp: negentropy.MaxTimestamp}); !errors.Is(err, negentropy.ErrInfiniteTimestamp) {
		t.Errorf("infinity: %v", err)
	}
	if _, err := tr.Fingerprint(0, 2); !errors.Is(err, negentropy.ErrRange) {
		t.Errorf("range: %v", err)
	}
	_, err := negentropy.BuildTree(func(yield func(negentropy.Item, error) bool) {
		_ = yield(negentropy.Item{Timestamp: 2}, nil) && yield(negentropy.Item{Timestamp: 1}, nil)
	})
	if err == nil {
		t.Error("BuildTree accepted items out of order")
	}
}
