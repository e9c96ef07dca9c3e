// Package gen makes deterministic pairs of item sets for the negentropy
// tests and benchmarks.
package gen

import (
	"math/rand/v2"
	"slices"

	"github.com/minca-go/minca/negentropy"
)

// Timestamps names how item timestamps are drawn.
type Timestamps string

// The timestamp layouts.
const (
	// Spread draws from [base, base+N): a few items share each timestamp.
	Spread Timestamps = "spread"
	// Clustered puts items in runs of consecutive seconds far apart.
	Clustered Timestamps = "clustered"
	// Equal gives every item the same timestamp.
	Equal Timestamps = "equal"
	// Wide draws from the whole 64-bit range below infinity.
	Wide Timestamps = "wide"
)

// Spec describes a pair of sets A and B drawn from N distinct items.
type Spec struct {
	N          int
	OnlyA      float64 // share of items only in A
	OnlyB      float64 // share of items only in B
	Timestamps Timestamps
	Seed       uint64
}

// Pair returns A and B sorted, each item in A only, B only or both by the
// spec's shares.
func Pair(s Spec) (a, b []negentropy.Item) {
	r := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	const base = 1677970534
	run, next := 0, uint64(base)
	for range s.N {
		var it negentropy.Item
		for i := 0; i < negentropy.IDSize; i += 8 {
			v := r.Uint64()
			for j := range 8 {
				it.ID[i+j] = byte(v >> (8 * j))
			}
		}
		switch s.Timestamps {
		case Equal:
			it.Timestamp = base
		case Clustered:
			if run == 0 {
				run = 1 + r.IntN(50)
				next += uint64(1 + r.IntN(1_000_000))
			}
			run--
			next++
			it.Timestamp = next
		case Wide:
			it.Timestamp = r.Uint64N(negentropy.MaxTimestamp)
		default:
			it.Timestamp = base + uint64(r.IntN(max(s.N, 1)))
		}
		switch x := r.Float64(); {
		case x < s.OnlyA:
			a = append(a, it)
		case x < s.OnlyA+s.OnlyB:
			b = append(b, it)
		default:
			a = append(a, it)
			b = append(b, it)
		}
	}
	slices.SortFunc(a, negentropy.Item.Compare)
	slices.SortFunc(b, negentropy.Item.Compare)
	return a, b
}

// Vector returns a sealed Vector of items.
func Vector(items []negentropy.Item) (*negentropy.Vector, error) {
	v := negentropy.NewVector(len(items))
	for _, it := range items {
		if err := v.Insert(it.Timestamp, it.ID); err != nil {
			return nil, err
		}
	}
	return v, v.Seal()
}

// Tree returns a Tree of sorted items built in one pass.
func Tree(items []negentropy.Item) (*negentropy.Tree, error) {
	return negentropy.BuildTree(func(yield func(negentropy.Item, error) bool) {
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
	})
}
