package enginetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/record"
)

// snapshot describes the held state of the versions vs name: for each, how
// it is held and its standing; and each record's current version; and the
// line proofs. Two stores with the same snapshot hold the same.
func snapshot(t *testing.T, s *engine.Store, vs []*record.Version) string {
	t.Helper()
	var lines []string
	recs := map[[2]string]bool{}
	spaces := map[string]bool{}
	for _, v := range vs {
		verdict, st, err := s.Standing(ctx, Digest(v))
		if err != nil {
			lines = append(lines, v.ID+" not held")
		} else {
			lines = append(lines, fmt.Sprintf("%s %v %v", v.ID, verdict, st))
		}
		recs[[2]string{v.Space, v.Key}] = true
		spaces[v.Space] = true
	}
	for r := range recs {
		lines = append(lines, fmt.Sprintf("record %s current %q", r[1], currentID(t, s, r[0], r[1])))
	}
	for sp := range spaces {
		ps, err := s.LineProofs(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			lines = append(lines, fmt.Sprintf("proof %s %s %s", p.Kind, p.A.ID, p.B.ID))
		}
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Changes = 0 // how many steps it took differs by order
	lines = append(lines, fmt.Sprintf("stats %+v", st))
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// orderCorpus is a set of versions exercising everything that depends on
// arrival order: edits, deletes, retained versions, stubs that travel as
// stubs, whole copies of them, two devices editing apart, a fork, and
// chains several versions long.
func orderCorpus(t *testing.T, sp string) []*record.Version {
	r := rand.New(rand.NewPCG(7, 8))
	var vs []*record.Version
	add := func(v *record.Version) *record.Version { vs = append(vs, v); return v }
	for range 3 {
		w := writer(t, sp)
		for k := range 3 {
			var opts []Opt
			if k == 1 {
				opts = append(opts, Retain)
			}
			v := add(must[*record.Version](t)(w.First("app.note", Body(r, 0), opts...)))
			for i := 1; i <= 1+k; i++ {
				v = add(must[*record.Version](t)(w.Next(v, Body(r, i))))
			}
			if k == 2 {
				add(must[*record.Version](t)(w.Delete(v)))
			}
		}
		// Two devices of one key edit apart: two seq 1 versions.
		a0 := add(must[*record.Version](t)(w.First("app.todo", Body(r, 0))))
		a1 := add(must[*record.Version](t)(w.Next(a0, Body(r, 1))))
		add(must[*record.Version](t)(w.Next(a0, Body(r, 2))))
		add(a1.Stub())
		add(a0.Stub())
		w.Fork("app.todo")
		add(must[*record.Version](t)(w.First("app.todo", Body(r, 9))))
	}
	return vs
}

// The same set of versions in 50 random orders, in batches of random sizes,
// gives the same held state and the same current versions (DESIGN.md, The
// engine: invariants).
func (h *harness) testOrderIndependence(t *testing.T) {
	sp := SpaceID("order-independence")
	vs := orderCorpus(t, sp)
	orders := 50
	if testing.Short() || race.Enabled {
		orders = 10 // each order is a new store, several times slower under -race
	}
	var first string
	r := rand.New(rand.NewPCG(11, 12))
	for i := range orders {
		perm := slices.Clone(vs)
		r.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		s := h.store(t, nil)
		for len(perm) > 0 {
			n := min(len(perm), 1+r.IntN(6))
			admit(t, s, "p", perm[:n]...)
			perm = perm[n:]
		}
		got := snapshot(t, s, vs)
		if i == 0 {
			first = got
			clean(t, s)
		} else if got != first {
			t.Fatalf("order %d holds otherwise:\n%s\n--- first order:\n%s", i, got, first)
		}
		s.Close()
	}
	if !strings.Contains(first, "proof fork") || !strings.Contains(first, "stub") {
		t.Fatalf("the corpus did not exercise forks and stubs:\n%s", first)
	}
}
