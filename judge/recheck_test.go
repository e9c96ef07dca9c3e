package judge_test

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/space/spacetest"
)

// Recheck finds nothing in a store the full judge filled, and names each
// version whose standing differs from the replay's, or that the full
// judge would refuse.
func TestRecheck(t *testing.T) {
	sp, err := spacetest.Random(spacetest.Options{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	p := newPeer(t, sp.Genesis)
	p.j.Base.Notes = sp.Notes
	p.admit(sp.Versions...)
	p.admit(sp.Versions...)
	probs, err := judge.Recheck(ctx, p.st, sp.Notes)
	if err != nil || len(probs) > 0 {
		t.Fatalf("a store the full judge filled: %v %v", probs, err)
	}
	// A standing changed behind the judge's back.
	var stood string
	for _, v := range sp.Versions {
		if !space.IsAccessCollection(v.Collection) && p.standing(v.ID) == engine.Stands {
			stood = v.ID
			break
		}
	}
	if err := p.st.SetStanding(ctx, idOf(stood), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	probs, err = judge.Recheck(ctx, p.st, sp.Notes)
	if err != nil || len(probs) != 1 || !strings.Contains(probs[0], stood) || !strings.Contains(probs[0], "the replay says stands") {
		t.Fatalf("%v %v", probs, err)
	}
	// A store filled by the judge that lets every root write holds what the
	// full judge refuses.
	st, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{Notes: &identity.Checker{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Admit(ctx, "p", sp.Versions); err != nil {
		t.Fatal(err)
	}
	if probs, _ := judge.Recheck(ctx, st, sp.Notes); len(probs) != 1 || !strings.Contains(probs[0], "genesis is not") {
		t.Fatalf("no genesis: %v", probs)
	}
	if err := st.SetMeta(ctx, "space/genesis/"+sp.Genesis.ID, sp.Genesis.Canonical()); err != nil {
		t.Fatal(err)
	}
	if probs, _ := judge.Recheck(ctx, st, sp.Notes); len(probs) == 0 || !strings.Contains(strings.Join(probs, "\n"), "the full judge refuses it") {
		t.Fatalf("every root's versions: %v", probs)
	}
}
