package negentropy_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/minca-go/minca/internal/longtest"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/internal/gen"
)

// transcript is one whole reconciliation: every message each way and what
// the client learnt.
type transcript struct {
	msgs       [][]byte
	have, need []negentropy.ID
}

// sync runs client over a and server over b to completion in process.
func sync(a, b negentropy.Storage, limA, limB uint64) (transcript, error) {
	var tr transcript
	c, err := negentropy.NewClient(a, limA)
	if err != nil {
		return tr, err
	}
	s, err := negentropy.NewServer(b, limB)
	if err != nil {
		return tr, err
	}
	q, err := c.Initiate()
	if err != nil {
		return tr, err
	}
	for round := 0; q != nil; round++ {
		if round > 10_000 {
			return tr, fmt.Errorf("no end after %d rounds", round)
		}
		if limA != 0 && uint64(len(q)) > limA {
			return tr, fmt.Errorf("round %d: client message %d bytes over limit %d", round, len(q), limA)
		}
		tr.msgs = append(tr.msgs, q)
		ans, err := s.Reconcile(q)
		if err != nil {
			return tr, fmt.Errorf("round %d: server: %w", round, err)
		}
		if limB != 0 && uint64(len(ans)) > limB {
			return tr, fmt.Errorf("round %d: server message %d bytes over limit %d", round, len(ans), limB)
		}
		tr.msgs = append(tr.msgs, ans)
		r, err := c.Reconcile(ans)
		if err != nil {
			return tr, fmt.Errorf("round %d: client: %w", round, err)
		}
		tr.have = append(tr.have, r.Have...)
		tr.need = append(tr.need, r.Need...)
		q = r.Next
	}
	return tr, nil
}

// diff returns the ids of x not in y; both sorted.
func diff(x, y []negentropy.Item) []negentropy.ID {
	var out []negentropy.ID
	j := 0
	for _, it := range x {
		for j < len(y) && y[j].Compare(it) < 0 {
			j++
		}
		if j < len(y) && y[j] == it {
			continue
		}
		out = append(out, it.ID)
	}
	return out
}

func sameSet(got, want []negentropy.ID, dupsOK bool) error {
	g := slices.Clone(got)
	slices.SortFunc(g, func(a, b negentropy.ID) int { return bytes.Compare(a[:], b[:]) })
	if !dupsOK {
		for i := 1; i < len(g); i++ {
			if g[i] == g[i-1] {
				return fmt.Errorf("id %s reported twice", g[i])
			}
		}
	}
	g = slices.Compact(g)
	w := slices.Clone(want)
	slices.SortFunc(w, func(a, b negentropy.ID) int { return bytes.Compare(a[:], b[:]) })
	if !slices.Equal(g, w) {
		return fmt.Errorf("got %d distinct ids, want %d", len(g), len(w))
	}
	return nil
}

type scenario struct {
	name string
	spec gen.Spec
}

func scenarios(short bool) []scenario {
	var out []scenario
	sizes := []int{0, 1, 2, 31, 32, 33, 100, 1000, 10_000}
	if longtest.Enabled() {
		sizes = append(sizes, 100_000)
	}
	shapes := []struct {
		name         string
		onlyA, onlyB float64
	}{
		{"disjoint", 0.5, 0.5},
		{"equal", 0, 0},
		{"subset", 0, 0.3},
		{"superset", 0.3, 0},
		{"1pct", 0.005, 0.005},
		{"50pct", 0.25, 0.25},
	}
	for _, n := range sizes {
		for _, sh := range shapes {
			for _, ts := range []gen.Timestamps{gen.Spread, gen.Clustered, gen.Equal, gen.Wide} {
				if n >= 100_000 && ts == gen.Wide || short && n >= 10_000 && ts != gen.Spread {
					continue // keep -short and -race quick
				}
				out = append(out, scenario{
					name: fmt.Sprintf("n%d/%s/%s", n, sh.name, ts),
					spec: gen.Spec{N: n, OnlyA: sh.onlyA, OnlyB: sh.onlyB, Timestamps: ts, Seed: uint64(n)*31 + uint64(len(out))},
				})
			}
		}
	}
	return out
}

// TestReconcileProperty reconciles random pairs of sets, with and without
// frame size limits on either side, and checks have/need are exactly the
// symmetric difference. With no limit each id is reported once. Under
// -short or -race, sets of 10,000 run with spread timestamps only.
func TestReconcileProperty(t *testing.T) {
	limits := [][2]uint64{{0, 0}, {4096, 0}, {0, 4096}, {5000, 60_000}, {60_000, 4096}}
	for _, sc := range scenarios(testing.Short() || race.Enabled) {
		t.Run(sc.name, func(t *testing.T) {
			a, b := gen.Pair(sc.spec)
			va, err := gen.Vector(a)
			if err != nil {
				t.Fatal(err)
			}
			vb, err := gen.Vector(b)
			if err != nil {
				t.Fatal(err)
			}
			wantHave, wantNeed := diff(a, b), diff(b, a)
			for _, lim := range limits {
				if sc.spec.N >= 100_000 && lim[0]+lim[1] != 0 && lim != [2]uint64{5000, 60_000} {
					continue // keep the big cases to one limited run
				}
				tr, err := sync(va, vb, lim[0], lim[1])
				if err != nil {
					t.Fatalf("limits %v: %v", lim, err)
				}
				dupsOK := lim[0]+lim[1] != 0
				if err := sameSet(tr.have, wantHave, dupsOK); err != nil {
					t.Errorf("limits %v: have: %v", lim, err)
				}
				if err := sameSet(tr.need, wantNeed, dupsOK); err != nil {
					t.Errorf("limits %v: need: %v", lim, err)
				}
			}
		})
	}
}

// TestStoragesIdenticalMessages checks Vector and Tree give the same bytes,
// either side, with and without limits.
func TestStoragesIdenticalMessages(t *testing.T) {
	sizes := []int{0, 5, 40, 3000, 20_000}
	if longtest.Enabled() {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		for _, ts := range []gen.Timestamps{gen.Spread, gen.Equal} {
			for _, lim := range []uint64{0, 4096} {
				t.Run(fmt.Sprintf("n%d/%s/limit%d", n, ts, lim), func(t *testing.T) {
					a, b := gen.Pair(gen.Spec{N: n, OnlyA: 0.02, OnlyB: 0.03, Timestamps: ts, Seed: uint64(n) + 7})
					va, _ := gen.Vector(a)
					vb, _ := gen.Vector(b)
					ta, err := gen.Tree(a)
					if err != nil {
						t.Fatal(err)
					}
					tb, _ := gen.Tree(b)
					want, err := sync(va, vb, lim, lim)
					if err != nil {
						t.Fatal(err)
					}
					for name, pair := range map[string][2]negentropy.Storage{
						"tree/tree":     {ta, tb},
						"tree/vector":   {ta, vb},
						"vector/tree":   {va, tb},
						"vector/vector": {va, vb},
					} {
						got, err := sync(pair[0], pair[1], lim, lim)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if len(got.msgs) != len(want.msgs) {
							t.Fatalf("%s: %d messages, want %d", name, len(got.msgs), len(want.msgs))
						}
						for i := range got.msgs {
							if !bytes.Equal(got.msgs[i], want.msgs[i]) {
								t.Fatalf("%s: message %d differs", name, i)
							}
						}
						if !slices.Equal(got.have, want.have) || !slices.Equal(got.need, want.need) {
							t.Fatalf("%s: have/need differ", name)
						}
					}
				})
			}
		}
	}
}
