package enginestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/enginestore"
	"github.com/minca-go/minca/negentropy/internal/gen"
)

// fakeOrder is a sync order over a sorted slice that counts items read.
type fakeOrder struct {
	items []negentropy.Item
	read  int
	fail  error
}

func (f *fakeOrder) Iterate(ctx context.Context, scope enginestore.Scope, from negentropy.Item) iter.Seq2[negentropy.Item, error] {
	return func(yield func(negentropy.Item, error) bool) {
		if scope.Space != "space-1" {
			return
		}
		i, _ := slices.BinarySearchFunc(f.items, from, negentropy.Item.Compare)
		for ; i < len(f.items); i++ {
			if err := ctx.Err(); err != nil {
				yield(negentropy.Item{}, err)
				return
			}
			if f.fail != nil && i == len(f.items)/2 {
				yield(negentropy.Item{}, f.fail)
				return
			}
			f.read++
			if !yield(f.items[i], nil) {
				return
			}
		}
	}
}

var scope = enginestore.Scope{Space: "space-1"}

func run(a, b negentropy.Storage) ([][]byte, error) {
	c, _ := negentropy.NewClient(a, 0)
	s, _ := negentropy.NewServer(b, 0)
	q, err := c.Initiate()
	var msgs [][]byte
	for err == nil && q != nil {
		msgs = append(msgs, q)
		var ans []byte
		if ans, err = s.Reconcile(q); err != nil {
			break
		}
		msgs = append(msgs, ans)
		var r negentropy.Round
		r, err = c.Reconcile(ans)
		q = r.Next
	}
	return msgs, err
}

func TestStoreMatchesVector(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 129, 5000, 40_000} {
		for _, bs := range []int{1, 7, 0} {
			t.Run(fmt.Sprintf("n%d/block%d", n, bs), func(t *testing.T) {
				a, b := gen.Pair(gen.Spec{N: n, OnlyA: 0.01, OnlyB: 0.02, Timestamps: gen.Spread, Seed: uint64(n)})
				fa, fb := &fakeOrder{items: a}, &fakeOrder{items: b}
				sa, err := enginestore.Build(context.Background(), fa, scope, enginestore.Options{BlockSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				sb, err := enginestore.Build(context.Background(), fb, scope, enginestore.Options{BlockSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				if fa.read != len(a) {
					t.Fatalf("build read %d items, want one pass of %d", fa.read, len(a))
				}
				va, _ := gen.Vector(a)
				vb, _ := gen.Vector(b)
				want, err := run(va, vb)
				if err != nil {
					t.Fatal(err)
				}
				for name, p := range map[string][2]negentropy.Storage{"store/store": {sa, sb}, "store/vector": {sa, vb}, "vector/store": {va, sb}} {
					got, err := run(p[0], p[1])
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if len(got) != len(want) {
						t.Fatalf("%s: %d messages, want %d", name, len(got), len(want))
					}
					for i := range got {
						if !bytes.Equal(got[i], want[i]) {
							t.Fatalf("%s: message %d differs", name, i)
						}
					}
				}
			})
		}
	}
}

func TestStoreErrors(t *testing.T) {
	a, _ := gen.Pair(gen.Spec{N: 1000, Timestamps: gen.Spread, Seed: 1})
	boom := errors.New("disk on fire")
	if _, err := enginestore.Build(context.Background(), &fakeOrder{items: a, fail: boom}, scope, enginestore.Options{}); !errors.Is(err, boom) {
		t.Fatalf("build with failing order: %v", err)
	}
	f := &fakeOrder{items: slices.Clone(a)}
	s, err := enginestore.Build(context.Background(), f, scope, enginestore.Options{BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	f.items = slices.Delete(f.items, 497, 498) // the snapshot changes
	if _, err := s.Fingerprint(0, 500); !errors.Is(err, enginestore.ErrChanged) {
		t.Fatalf("fingerprint after change: %v", err)
	}
	srv, _ := negentropy.NewServer(s, 0)
	if _, err := srv.Reconcile([]byte{0x61, 0x00, 0x00, 0x02, 0x00}); !errors.Is(err, enginestore.ErrChanged) {
		t.Fatalf("reconcile after change: %v", err)
	}
	if _, err := s.Fingerprint(0, 1001); !errors.Is(err, negentropy.ErrRange) {
		t.Fatalf("range: %v", err)
	}
	unsorted := []negentropy.Item{{Timestamp: 2}, {Timestamp: 1}}
	if _, err := enginestore.Build(context.Background(), &fakeOrder{items: unsorted}, scope, enginestore.Options{}); err == nil {
		t.Fatal("build accepted items out of order")
	}
}
