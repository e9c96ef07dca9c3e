package enginetest

import (
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// An outcome says what the store holds once its batch is in, so callers
// need not read it back: whether the batch took the version in (New),
// whether it is its record's top held version (Top, 02 §4.3) and whether
// its writer's line lacks the version before it (Gap, §4.10).
func (h *harness) testOutcomes(t *testing.T) {
	sp := SpaceID("outcomes")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "zero")) // line place 0
	a1 := must[*record.Version](t)(w.Next(a0, "one"))           // 1, after a0
	a2 := must[*record.Version](t)(w.Next(a1, "two"))           // 2, after a1
	b0 := must[*record.Version](t)(w.First("app.note", "b"))    // 3, after a2
	s := h.store(t, nil)
	type is struct{ newly, top, gap bool }
	check := func(o engine.Outcome, v *record.Version, want is) {
		t.Helper()
		if o.ID != v.ID || o.Verdict != engine.Stands {
			t.Fatalf("%s: %v (%v)", o.ID, o.Verdict, o.Refusal)
		}
		if got := (is{o.New, o.Top, o.Gap}); got != want {
			t.Fatalf("%s: new, top, gap %+v, want %+v", o.ID, got, want)
		}
	}
	check(admit(t, s, "p", b0)[0], b0, is{true, true, true}) // a2 is not held
	outs := admit(t, s, "p", a0, a1)
	check(outs[0], a0, is{true, false, false}) // a1, in the same batch, supersedes it
	check(outs[1], a1, is{true, true, false})  // a0 came in the same batch
	check(admit(t, s, "p", a0)[0], a0, is{false, false, false})
	check(admit(t, s, "p", b0)[0], b0, is{false, true, true})
	outs = admit(t, s, "p", a2.Stub(), b0)
	check(outs[0], a2.Stub(), is{true, true, false}) // a current stub: its body to ask for
	if outs[0].Stored != engine.Stub {
		t.Fatalf("a2's stub stored %v", outs[0].Stored)
	}
	check(outs[1], b0, is{false, true, false}) // the hole is filled
	check(admit(t, s, "p", a2)[0], a2, is{false, true, false})
	if st := storedAs(t, s, a2); st != engine.Whole {
		t.Fatalf("a2 %v once its body came", st)
	}
	clean(t, s)
}
