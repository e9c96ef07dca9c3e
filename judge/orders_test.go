package judge_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// arrival is one order a peer may receive a set of versions in: batches of
// them, and after which batch the space's genesis comes (len(batches): last).
type arrival struct {
	name      string
	batches   [][]*record.Version
	genesisAt int
}

// nineOrders are the arrivals every scenario of a judge's gap is tried in:
// causal one at a time and in one batch, reversed, the access history last
// and first, one at a time shuffled three ways, shuffled in batches of
// three, and the genesis last.
func nineOrders(vs []*record.Version) []arrival {
	one := func(l []*record.Version) [][]*record.Version {
		out := make([][]*record.Version, len(l))
		for i, v := range l {
			out[i] = []*record.Version{v}
		}
		return out
	}
	var access, rest []*record.Version
	for _, v := range vs {
		if space.IsAccessCollection(v.Collection) {
			access = append(access, v)
		} else {
			rest = append(rest, v)
		}
	}
	reversed := slices.Clone(vs)
	slices.Reverse(reversed)
	shuffled := func(seed uint64) []*record.Version {
		l := slices.Clone(vs)
		r := rand.New(rand.NewPCG(seed, 23))
		r.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
		return l
	}
	var threes [][]*record.Version
	for l := shuffled(4); len(l) > 0; {
		k := min(3, len(l))
		threes = append(threes, l[:k])
		l = l[k:]
	}
	revRest := slices.Clone(rest)
	slices.Reverse(revRest)
	return []arrival{
		{"causal", one(vs), 0},
		{"one batch", [][]*record.Version{vs}, 0},
		{"reversed", one(reversed), 0},
		{"access last", one(append(slices.Clone(rest), access...)), 0},
		{"access first, the rest reversed", one(append(slices.Clone(access), revRest...)), 0},
		{"shuffled 1", one(shuffled(1)), 0},
		{"shuffled 2", one(shuffled(2)), 0},
		{"shuffled in threes", threes, 0},
		{"genesis last", one(vs), len(vs)},
	}
}

// inNineOrders admits vs into a new peer in each of nine orders and checks
// that every order ends the same: each version's standing, each record's
// current version, and the access state. check is called with the peer
// each order ends with.
func inNineOrders(t *testing.T, g *space.Genesis, vs []*record.Version, check func(name string, p *peer)) {
	t.Helper()
	want, first := "", ""
	for _, a := range nineOrders(vs) {
		p := newPeer(t, nil)
		for i, b := range a.batches {
			if i == a.genesisAt {
				if err := judge.AddGenesis(ctx, p.st, g); err != nil {
					t.Fatal(err)
				}
			}
			p.admit(b...)
		}
		if a.genesisAt >= len(a.batches) {
			if err := judge.AddGenesis(ctx, p.st, g); err != nil {
				t.Fatal(err)
			}
		}
		if probs, err := p.st.Check(ctx, nil); err != nil || len(probs) > 0 {
			t.Fatalf("%s: store check: %v %v", a.name, probs, err)
		}
		if probs, err := judge.Recheck(ctx, p.st, p.j.Base.Notes); err != nil || len(probs) > 0 {
			t.Fatalf("%s: the full judge, again: %v %v", a.name, probs, err)
		}
		got := outcomeText(t, p, g, vs)
		if want == "" {
			want, first = got, a.name
		} else if got != want {
			t.Fatalf("%s ends other than %s:\n%s", a.name, first, diff(want, got))
		}
		check(a.name, p)
	}
}

// outcomeText writes down what must not depend on the order.
func outcomeText(t *testing.T, p *peer, g *space.Genesis, vs []*record.Version) string {
	t.Helper()
	var b strings.Builder
	keys := map[string]bool{}
	for _, v := range vs {
		keys[v.Key] = true
		b.WriteString(v.ID + " " + p.standing(v.ID).String() + "\n")
	}
	ks := make([]string, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		b.WriteString("current " + k + " " + p.current(g.ID, k) + "\n")
	}
	b.WriteString(StateText(p.history(g.ID)))
	return b.String()
}

// wantStanding checks each version's standing on p.
func wantStanding(t *testing.T, order string, p *peer, want map[*record.Version]engine.Verdict) {
	t.Helper()
	for v, w := range want {
		if got := p.standing(v.ID); got != w {
			t.Fatalf("%s: %s %s (%s) is %v, want %v", order, v.Collection, v.Key, v.ID, got, w)
		}
	}
}
