package negentropy_test

import (
	"fmt"
	"testing"

	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/internal/gen"
)

func benchStorages(b *testing.B, n int) map[string]negentropy.Storage {
	items, _ := gen.Pair(gen.Spec{N: n, Timestamps: gen.Spread, Seed: 1})
	v, err := gen.Vector(items)
	if err != nil {
		b.Fatal(err)
	}
	t, err := gen.Tree(items)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]negentropy.Storage{"vector": v, "tree": t}
}

// BenchmarkFingerprint is the fingerprint of a random range of 100,000 items.
func BenchmarkFingerprint(b *testing.B) {
	const n = 100_000
	for _, name := range []string{"vector", "tree"} {
		s := benchStorages(b, n)[name]
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				lo := (i * 7919) % (n / 2)
				if _, err := s.Fingerprint(lo, lo+n/2); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkBuildTree builds a Tree of 100,000 sorted items.
func BenchmarkBuildTree(b *testing.B) {
	items, _ := gen.Pair(gen.Spec{N: 100_000, Timestamps: gen.Spread, Seed: 1})
	for b.Loop() {
		if _, err := gen.Tree(items); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReconcile reconciles 100,000 items a side, 1% different.
func BenchmarkReconcile(b *testing.B) {
	a, c := gen.Pair(gen.Spec{N: 100_000, OnlyA: 0.005, OnlyB: 0.005, Timestamps: gen.Spread, Seed: 1})
	for _, kind := range []string{"vector", "tree"} {
		var sa, sc negentropy.Storage
		if kind == "vector" {
			sa, _ = gen.Vector(a)
			sc, _ = gen.Vector(c)
		} else {
			sa, _ = gen.Tree(a)
			sc, _ = gen.Tree(c)
		}
		for _, lim := range []uint64{0, 60_000} {
			b.Run(fmt.Sprintf("%s/limit%d", kind, lim), func(b *testing.B) {
				for b.Loop() {
					if _, err := sync(sa, sc, lim, lim); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
