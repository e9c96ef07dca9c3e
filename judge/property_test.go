package judge_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/internal/longtest"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/space/spacetest"
)

type backend struct {
	name string
	open func(t *testing.T) engine.KV
}

var backends = []backend{
	{"memory", func(t *testing.T) engine.KV { return memory.Open(nil) }},
	{"pebble", func(t *testing.T) engine.KV {
		kv, err := pebble.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}},
	{"sqlite", func(t *testing.T) engine.KV {
		kv, err := sqlite.Open(filepath.Join(t.TempDir(), "db.sqlite"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}},
}

// replay admits a random space's versions into a new store in the given
// order and batches, adding its genesis after batch genesisAt, and returns
// what the store and the judge end with.
func replay(t *testing.T, b backend, sp *spacetest.Space, vf *record.Verifier, order []int, sizes []int, genesisAt int) string {
	t.Helper()
	j := &judge.SpaceJudge{Base: &judge.Judge{Verifier: vf, Notes: sp.Notes}}
	st, err := engine.Open(b.open(t), &engine.Options{Judge: j, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j.Source = st
	at := 0
	for i, n := range sizes {
		if i == genesisAt {
			if err := judge.AddGenesis(ctx, st, sp.Genesis); err != nil {
				t.Fatal(err)
			}
		}
		var vs []*record.Version
		for _, k := range order[at : at+n] {
			vs = append(vs, sp.Versions[k])
		}
		at += n
		if _, err := st.Admit(ctx, "peer", vs); err != nil {
			t.Fatal(err)
		}
	}
	if genesisAt >= len(sizes) {
		if err := judge.AddGenesis(ctx, st, sp.Genesis); err != nil {
			t.Fatal(err)
		}
	}
	// A withdrawal can leave a record reading a version whose body was
	// dropped when it was superseded (02 §4.5, §9.5); a sync session asks
	// a peer for the bodies of such current stubs. Here every version is
	// sent once more, which gives them back and changes nothing else.
	if _, err := st.Admit(ctx, "peer", sp.Versions); err != nil {
		t.Fatal(err)
	}
	if probs, err := st.Check(ctx, nil); err != nil || len(probs) > 0 {
		t.Fatalf("store check: %v %v", probs, err)
	}
	return snapshotOf(t, st, j, sp)
}

// snapshotOf writes down everything that must not depend on the order:
// each version's standing and how it is held, each record's current
// version, what waits, and the access state.
func snapshotOf(t *testing.T, st *engine.Store, j *judge.SpaceJudge, sp *spacetest.Space) string {
	t.Helper()
	var b strings.Builder
	keys := map[string]bool{}
	for _, v := range sp.Versions {
		keys[v.Key] = true
		verdict, stored, err := st.Standing(ctx, enginetest.Digest(v))
		if err != nil {
			fmt.Fprintf(&b, "%s -\n", v.ID)
			continue
		}
		fmt.Fprintf(&b, "%s %v %v\n", v.ID, verdict, stored)
	}
	ks := make([]string, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		cur, err := st.Current(ctx, sp.Genesis.ID, k)
		id := ""
		if err == nil {
			id = cur.ID
		}
		fmt.Fprintf(&b, "current %s %s\n", k, id)
	}
	var waiting []string
	st.Waiting(func(v *record.Version, _ []string) bool { waiting = append(waiting, v.ID); return true })
	slices.Sort(waiting)
	fmt.Fprintf(&b, "waiting %v\n", waiting)
	h, ok, err := j.History(ctx, sp.Genesis.ID)
	if err != nil || !ok {
		t.Fatalf("history: %v %v", ok, err)
	}
	b.WriteString(StateText(h))
	return b.String()
}

// StateText writes down a history's state now and each change's counting.
func StateText(h *space.History) string {
	var b strings.Builder
	now := h.Now()
	for _, m := range now.Members() {
		fmt.Fprintf(&b, "member %s founder=%v roles=%v\n", m.Root, m.Founder, m.Roles)
	}
	for _, r := range now.AllRoles() {
		var gs []string
		for _, g := range r.Grants {
			gs = append(gs, g.Key())
		}
		slices.Sort(gs)
		fmt.Fprintf(&b, "role %s %v\n", r.Name, gs)
	}
	for _, d := range now.Definitions() {
		fmt.Fprintf(&b, "definition %s inForce=%s contested=%v rivals=%v definer=%s\n", d.Name, d.InForce, d.Contested, d.Rivals, d.Definer)
	}
	for _, r := range now.Revoked() {
		fmt.Fprintf(&b, "revoked %s %s %v\n", r.Key, r.Root, r.Cutoffs)
	}
	for _, f := range now.Forked() {
		fmt.Fprintf(&b, "forked %s %s %d %v\n", f.Author, f.Collection, f.From, f.Roots)
	}
	fmt.Fprintf(&b, "relays %v keepers %v heads %v\n", now.Relays(), now.Keepers(), h.Heads())
	var counts []string
	h.Changes(func(c *space.Change, ok bool) bool {
		counts = append(counts, fmt.Sprintf("%s %v", c.ID, ok))
		return true
	})
	slices.Sort(counts)
	b.WriteString(strings.Join(counts, "\n"))
	return b.String()
}

// randomOrder is a random arrival: a permutation of the versions, random
// batch sizes, and where the genesis comes.
func randomOrder(r *rand.Rand, n int) (order, sizes []int, genesisAt int) {
	order = r.Perm(n)
	for left := n; left > 0; {
		k := min(left, 1+r.IntN(8))
		sizes = append(sizes, k)
		left -= k
	}
	return order, sizes, r.IntN(len(sizes) + 1)
}

// Every order tried of the same versions, on every backend, ends with
// identical standing for every version, identical current versions and
// identical state. The random spaces hold forks of writers' lines, of
// record and of access-history lines, proven or not; removals,
// readmissions, and removed members signing joins again. 60 random spaces
// × 8 orders on memory, fewer on pebble and sqlite (40 × 6 under -short or
// -race); with -long (the soak), 2,000 spaces × 40 orders.
func TestPermutationsGiveTheSameState(t *testing.T) {
	spaces, orders, disk := 60, 8, 3
	if testing.Short() || race.Enabled {
		spaces, orders, disk = 40, 6, 2
	}
	if longtest.Enabled() {
		spaces, orders, disk = 2000, 40, 100
	}
	vf := &record.Verifier{Cache: &record.VerdictCache{}}
	stats := map[string]int{}
	for seed := uint64(1); seed <= uint64(spaces); seed++ {
		sp, err := spacetest.Random(spacetest.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 77))
		n := len(sp.Versions)
		want := ""
		for o := 0; o < orders; o++ {
			order, sizes, genesisAt := randomOrder(r, n)
			if o == 0 { // the order they were written in, first, in one batch each
				order, sizes, genesisAt = inOrder(n), ones(n), 0
			}
			got := replay(t, backends[0], sp, vf, order, sizes, genesisAt)
			if o == 0 {
				want = got
				for _, line := range strings.Split(got, "\n") {
					f := strings.Fields(line)
					switch {
					case len(f) == 3 && strings.HasPrefix(f[0], "b"):
						stats[f[1]]++
						if what, ok := sp.Made[f[0]]; ok {
							stats[what+" "+f[1]]++
						}
					case len(f) == 2 && f[1] == "-":
						stats["refused or waiting"]++
						if what, ok := sp.Made[f[0]]; ok {
							stats[what+" refused or waiting"]++
						}
					case len(f) > 3 && f[0] == "forked" && space.IsAccessCollection(f[2]):
						stats["forked access lines"]++
					}
				}
				continue
			}
			if got != want {
				t.Fatalf("seed %d, order %d: the state differs:\n%s", seed, o, diff(want, got))
			}
		}
		if int(seed) <= disk {
			for _, b := range backends[1:] {
				order, sizes, genesisAt := randomOrder(r, n)
				if got := replay(t, b, sp, vf, order, sizes, genesisAt); got != want {
					t.Fatalf("seed %d on %s: the state differs:\n%s", seed, b.name, diff(want, got))
				}
			}
		}
	}
	t.Logf("versions over %d spaces: %v", spaces, stats)
	for _, what := range []string{"stands", "withdrawn", "refused or waiting", "forked access lines",
		"access fork withdrawn", "readmission stands", "rejoin refused or waiting", "rejoin stands"} {
		if stats[what] == 0 {
			t.Fatalf("the random spaces exercise too little: no %q in %v", what, stats)
		}
	}
}

func inOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, "- "+x, "+ "+y)
		}
		if len(out) > 20 {
			break
		}
	}
	return strings.Join(out, "\n")
}
