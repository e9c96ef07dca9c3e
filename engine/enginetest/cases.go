package enginetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/record"
)

var ctx = context.Background()

// 02 §4.5: an older version arriving after a later one is kept only as a
// stub — whether it arrives after the later one was stored, or the later
// one waited for it.
func (h *harness) testStaleArrivesAsStub(t *testing.T) {
	sp := SpaceID("stale")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "zero"))
	a1 := must[*record.Version](t)(w.Next(a0, "one"))

	s := h.store(t, nil)
	want(t, admit(t, s, "p", a1)[0], engine.Later, engine.None)
	want(t, admit(t, s, "p", a0)[0], engine.Stands, engine.Stub)
	if st := storedAs(t, s, a1); st != engine.Whole {
		t.Fatalf("a1 stored %v after a0 arrived", st)
	}
	if got := currentID(t, s, sp, a0.Key); got != a1.ID {
		t.Fatalf("current %s, want a1", got)
	}

	s2 := h.store(t, nil)
	want(t, admit(t, s2, "p", a0)[0], engine.Stands, engine.Whole)
	want(t, admit(t, s2, "p", a1)[0], engine.Stands, engine.Whole)
	if st := storedAs(t, s2, a0); st != engine.Stub {
		t.Fatalf("a0 %v after a1, want stub (demoted in a1's batch)", st)
	}
	want(t, admit(t, s2, "q", a0)[0], engine.Stands, engine.Stub)
	v := must[*record.Version](t)(s2.Version(ctx, Digest(a0)))
	if !v.IsStub() {
		t.Fatal("a0 read whole")
	}
	if err := (&record.Verifier{}).Verify(v); err != nil {
		t.Fatalf("a stub must still verify: %v", err)
	}
	clean(t, s)
	clean(t, s2)
}

// 02 §4.5: a stub that no held version supersedes reads as not held until
// its body or a later version arrives.
func (h *harness) testStubOnTop(t *testing.T) {
	sp := SpaceID("stubtop")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "zero"))
	a1 := must[*record.Version](t)(w.Next(a0, "one"))
	a2 := must[*record.Version](t)(w.Next(a1, "two"))
	s := h.store(t, nil)
	want(t, admit(t, s, "p", a0.Stub())[0], engine.Stands, engine.Stub)
	if got := currentID(t, s, sp, a0.Key); got != "" {
		t.Fatalf("a stub on top read as %s", got)
	}
	want(t, admit(t, s, "p", a0)[0], engine.Stands, engine.Whole)
	if got := currentID(t, s, sp, a0.Key); got != a0.ID {
		t.Fatalf("current %q after the body came", got)
	}
	want(t, admit(t, s, "p", a1.Stub())[0], engine.Stands, engine.Stub)
	if st := storedAs(t, s, a0); st != engine.Stub {
		t.Fatal("a0 kept its body under a1's stub")
	}
	if got := currentID(t, s, sp, a0.Key); got != "" {
		t.Fatalf("record read as %s with a stub on top", got)
	}
	want(t, admit(t, s, "p", a0)[0], engine.Stands, engine.Stub) // not current: body not kept
	want(t, admit(t, s, "p", a2)[0], engine.Stands, engine.Whole)
	if got := currentID(t, s, sp, a0.Key); got != a2.ID {
		t.Fatalf("current %q after a later version", got)
	}
	want(t, admit(t, s, "p", a1)[0], engine.Stands, engine.Stub)
	clean(t, s)
}

// 02 §4.5: a retained version is never cut to a stub, and a stub of one is
// refused.
func (h *harness) testRetained(t *testing.T) {
	sp := SpaceID("retain")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "zero", Retain))
	a1 := must[*record.Version](t)(w.Next(a0, "one", Retain))
	a2 := must[*record.Version](t)(w.Delete(a1))
	s := h.store(t, nil)
	before := stats(t, s)
	o := admit(t, s, "p", a0.Stub())[0]
	if o.Verdict != engine.Refused || o.Refusal.Code != record.CodeRetainStub {
		t.Fatalf("stub of a retained version: %+v", o)
	}
	refusedLeavesNoTrace(t, s, before, a0)
	admit(t, s, "p", a0, a1, a2)
	for _, v := range []*record.Version{a0, a1} {
		if st := storedAs(t, s, v); st != engine.Whole {
			t.Fatalf("retained %s cut to %v", v.ID, st)
		}
	}
	hist := must[[]engine.Held](t)(s.History(ctx, sp, a0.Key))
	if len(hist) != 3 || hist[0].Version.ID != a2.ID || hist[2].Version.ID != a0.ID || hist[1].Version.IsStub() {
		t.Fatalf("history %+v", hist)
	}
	before = stats(t, s)
	o = admit(t, s, "p", a1.Stub())[0]
	if o.Verdict != engine.Refused {
		t.Fatalf("a stub of a held retained version: %+v", o)
	}
	if st := storedAs(t, s, a1); st != engine.Whole || stats(t, s) != before {
		t.Fatalf("a refused stub of held %s: it is held %v, counts %+v → %+v", a1.ID, st, before, stats(t, s))
	}
	clean(t, s)
}

// 02 §4.5: 1,000 edits keep one body (200 under -short or -race, where
// each edit costs several times more: still a chain that many batches of
// 50 cross).
func (h *harness) testThousandEdits(t *testing.T) {
	n := 1000
	if testing.Short() || race.Enabled {
		n = 200
	}
	sp := SpaceID("edits")
	w := writer(t, sp)
	s := h.store(t, nil)
	r := rand.New(rand.NewPCG(1, 2))
	v := must[*record.Version](t)(w.First("app.note", Body(r, 0)))
	batch := []*record.Version{v}
	for i := 1; i < n; i++ {
		v = must[*record.Version](t)(w.Next(v, Body(r, i)))
		batch = append(batch, v)
		if len(batch) == 50 || i == n-1 {
			admit(t, s, "p", batch...)
			batch = batch[:0]
		}
	}
	st := must[engine.Stats](t)(s.Stats(ctx))
	body := must[[]byte](t)(canonical.Marshal(v.Body))
	if st.Versions != int64(n) || st.Whole != 1 || st.Stubs != int64(n-1) || st.BodyBytes != int64(len(body)) {
		t.Fatalf("stats after %d edits: %+v (last body %d bytes)", n, st, len(body))
	}
	if got := currentID(t, s, sp, v.Key); got != v.ID {
		t.Fatal("the last edit is not current")
	}
	clean(t, s)
}

// 02 §4.4, §4.9: a newcomer after a delete receives stubs and the delete,
// never the body.
func (h *harness) testNewcomerAfterDelete(t *testing.T) {
	sp := SpaceID("delete")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "a secret"))
	a1 := must[*record.Version](t)(w.Next(a0, "still secret"))
	a2 := must[*record.Version](t)(w.Delete(a1))
	old := h.store(t, nil)
	admit(t, old, "p", a0, a1)
	admit(t, old, "p", a2)
	fresh := h.store(t, nil)
	var sent []*record.Version
	for v, err := range old.Export(ctx, sp) {
		if err != nil {
			t.Fatal(err)
		}
		if v.ID != a2.ID && !v.IsStub() {
			t.Fatalf("export sent the body of %s", v.ID)
		}
		sent = append(sent, v)
	}
	if len(sent) != 3 {
		t.Fatalf("exported %d versions, want 3", len(sent))
	}
	for _, o := range admit(t, fresh, "old", sent...) {
		if o.Verdict != engine.Stands {
			t.Fatalf("newcomer: %+v", o)
		}
	}
	for v, err := range fresh.Export(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if v.HasBody && !v.Deleted {
			t.Fatalf("the newcomer holds the body of %s", v.ID)
		}
	}
	cur := must[*record.Version](t)(fresh.Current(ctx, sp, a0.Key))
	if cur.ID != a2.ID || !cur.Deleted {
		t.Fatalf("current %s, want the delete", cur.ID)
	}
	clean(t, fresh)
}

// mangle returns a copy of v whose signature no longer verifies but whose
// id is v's (02 §3.2).
func mangle(t *testing.T, v *record.Version) *record.Version {
	o := v.Object().Clone()
	sig := []byte(v.Signature)
	if sig[3] == 'A' {
		sig[3] = 'B'
	} else {
		sig[3] = 'A'
	}
	o.Set("signature", string(sig))
	m, err := record.FromValue(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// 02 §3.2: a mangled-signature copy arriving first does not stop the
// genuine copy with the same id, from the same peer or another.
func (h *harness) testMangledFirst(t *testing.T) {
	sp := SpaceID("mangled")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "zero"))
	a1 := must[*record.Version](t)(w.Next(a0, "one"))
	s := h.store(t, nil)
	before := stats(t, s)
	o := admit(t, s, "stranger", mangle(t, a0), mangle(t, a1))
	for _, x := range o {
		if x.Verdict != engine.Refused || x.Refusal.Code != record.CodeSignature {
			t.Fatalf("mangled copy: %+v", x)
		}
	}
	refusedLeavesNoTrace(t, s, before, a0)
	refusedLeavesNoTrace(t, s, before, a1)
	if !s.Refused("stranger", Digest(a0)) || s.Refused("friend", Digest(a0)) {
		t.Fatal("refusal not remembered as (peer, id) only")
	}
	o = admit(t, s, "friend", a0)
	want(t, o[0], engine.Stands, engine.Whole)
	o = admit(t, s, "stranger", a1) // the same peer, now with the genuine copy
	want(t, o[0], engine.Stands, engine.Whole)
	before = stats(t, s)
	o = admit(t, s, "stranger", mangle(t, a1)) // a mangled copy of a held version
	if o[0].Verdict != engine.Refused {
		t.Fatalf("a mangled copy of a held version: %+v", o[0])
	}
	if st := storedAs(t, s, a1); st != engine.Whole || stats(t, s) != before {
		t.Fatal("a mangled copy changed the held version")
	}
	if got := must[*record.Version](t)(s.Version(ctx, Digest(a1))); got.Signature != a1.Signature {
		t.Fatal("a mangled copy's signature replaced the held one")
	}
	clean(t, s)
}

// 02 §9.5: waiting versions are re-judged when what they wait for arrives,
// chains of waiters included, in the same batch.
func (h *harness) testWaitingChains(t *testing.T) {
	sp := SpaceID("waiting")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "0"))
	a1 := must[*record.Version](t)(w.Next(a0, "1"))
	a2 := must[*record.Version](t)(w.Next(a1, "2"))
	a3 := must[*record.Version](t)(w.Next(a2, "3"))
	s := h.store(t, nil)
	for _, o := range admit(t, s, "p", a3, a2) {
		want(t, o, engine.Later, engine.None)
	}
	want(t, admit(t, s, "p", a1)[0], engine.Later, engine.None)
	st := must[engine.Stats](t)(s.Stats(ctx))
	if st.Waiting != 3 || st.Versions != 0 {
		t.Fatalf("stats %+v", st)
	}
	var waits [][]string
	if err := s.Waiting(func(v *record.Version, ws []string) bool { waits = append(waits, ws); return true }); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 3 || waits[0][0] != a2.ID {
		t.Fatalf("waiting for %v", waits)
	}
	outs := admit(t, s, "p", a1, a0)
	want(t, outs[0], engine.Stands, engine.Stub) // re-judged in this batch once a0 arrived
	want(t, outs[1], engine.Stands, engine.Stub)
	st = must[engine.Stats](t)(s.Stats(ctx))
	if st.Waiting != 0 || st.Versions != 4 || st.Whole != 1 {
		t.Fatalf("stats %+v", st)
	}
	if currentID(t, s, sp, a0.Key) != a3.ID {
		t.Fatal("a3 is not current")
	}
	clean(t, s)
}

// The waiting bound: past it the oldest waiting are dropped, as if never
// received.
func (h *harness) testWaitingBounded(t *testing.T) {
	sp := SpaceID("bound")
	w := writer(t, sp)
	s := h.store(t, &engine.Options{MaxWaiting: 3})
	var firsts, seconds []*record.Version
	for i := range 5 {
		a0 := must[*record.Version](t)(w.First("app.note", i))
		firsts = append(firsts, a0)
		seconds = append(seconds, must[*record.Version](t)(w.Next(a0, i+10)))
	}
	for _, v := range seconds {
		admit(t, s, "p", v)
	}
	if st := must[engine.Stats](t)(s.Stats(ctx)); st.Waiting != 3 {
		t.Fatalf("waiting %d, bound 3", st.Waiting)
	}
	outs := admit(t, s, "p", firsts...)
	for i := range firsts {
		want(t, outs[i], engine.Stands, map[bool]engine.Storage{true: engine.Whole, false: engine.Stub}[i < 2])
	}
	for i, v := range seconds {
		if got, wantSt := storedAs(t, s, v), map[bool]engine.Storage{true: engine.None, false: engine.Whole}[i < 2]; got != wantSt {
			t.Fatalf("second version %d: %v, want %v", i, got, wantSt)
		}
	}
	clean(t, s)
}

// The judge's refusals (chain, genesis, key ownership) are applied with
// their codes, and a loose version the judge let through is refused by the
// engine itself.
func (h *harness) testRefusals(t *testing.T) {
	sp := SpaceID("refuse")
	w := writer(t, sp)
	other := writer(t, sp)
	s := h.store(t, nil)
	a0 := must[*record.Version](t)(w.First("app.note", "0"))
	admit(t, s, "p", a0)
	cases := []struct {
		code string
		make func() *record.Version
	}{
		{record.CodeChainSeq, func() *record.Version {
			o := canonical.NewObject("body", "skip", "key", a0.Key, "seq", float64(5), "prev", a0.ID, "genesis", a0.ID)
			return must[*record.Version](t)(w.Sign(o, "app.note"))
		}},
		{record.CodeChainCollection, func() *record.Version {
			o := canonical.NewObject("body", "moved")
			record.NextAfter(a0).Apply(o)
			return must[*record.Version](t)(w.Sign(o, "app.other"))
		}},
		{record.CodeKeyOwner, func() *record.Version {
			o := canonical.NewObject("body", "mine", "key", a0.Key, "seq", float64(0))
			return must[*record.Version](t)(other.Sign(o, "app.note"))
		}},
		{engine.CodeStoreSpace, func() *record.Version {
			o := canonical.NewObject("body", "x", "key", a0.Key, "seq", float64(0), "collection", "app.note", "createdAt", "2026-01-01T00:00:00Z")
			return must[*record.Version](t)(record.Sign(o, w.Key))
		}},
	}
	for _, c := range cases {
		v := c.make()
		before := stats(t, s)
		o := admit(t, s, "p", v)[0]
		if o.Verdict != engine.Refused || o.Refusal == nil || o.Refusal.Code != c.code {
			t.Errorf("want %s, got %+v", c.code, o)
		}
		refusedLeavesNoTrace(t, s, before, v)
	}
	clean(t, s)

	// A version that waited and is refused once what it waited for
	// arrives (02 §9.5) leaves no trace either: the store holds what a
	// store given a0 alone holds.
	skip := cases[0].make()
	alone, s2 := h.store(t, nil), h.store(t, nil)
	admit(t, alone, "p", a0)
	want(t, admit(t, s2, "p", skip)[0], engine.Later, engine.None)
	want(t, admit(t, s2, "p", a0)[0], engine.Stands, engine.Whole)
	if !s2.Refused("p", Digest(skip)) {
		t.Error("the refusal on re-judging is not remembered as (peer, id)")
	}
	refusedLeavesNoTrace(t, s2, stats(t, alone), skip)
	clean(t, s2)
}

// Admitting what is held changes nothing.
func (h *harness) testIdempotent(t *testing.T) {
	sp := SpaceID("idem")
	vs := CorpusVersions(t, sp, CorpusOptions{Versions: 60, Seed: 3})
	s := h.store(t, nil)
	admit(t, s, "p", vs...)
	before := snapshot(t, s, vs)
	ch := must[engine.Stats](t)(s.Stats(ctx)).Changes
	admit(t, s, "q", vs...)
	if after := snapshot(t, s, vs); after != before {
		t.Fatalf("a second admission changed the state:\n%s\n%s", before, after)
	}
	if c := must[engine.Stats](t)(s.Stats(ctx)).Changes; c != ch {
		t.Fatalf("changes %d → %d", ch, c)
	}
	clean(t, s)
}

// 02 §4.10: a fork or break found on arrival is kept and published.
func (h *harness) testLines(t *testing.T) {
	sp := SpaceID("lines")
	w := writer(t, sp)
	s := h.store(t, nil)
	sub := s.Subscribe(sp, 16)
	defer sub.Close()
	v0 := must[*record.Version](t)(w.First("app.chat", "0"))
	v1 := must[*record.Version](t)(w.First("app.chat", "1"))
	w.Fork("app.chat")
	w1 := must[*record.Version](t)(w.First("app.chat", "1 again"))
	admit(t, s, "p", v0, v1)
	if ids := must[[]string](t)(s.Line(ctx, sp, w.Key.DID(), "app.chat", 1)); len(ids) != 1 || ids[0] != v1.ID {
		t.Fatalf("line place 1: %v", ids)
	}
	admit(t, s, "p", w1)
	proofs := must[[]*record.LineProof](t)(s.LineProofs(ctx, sp))
	if len(proofs) != 1 || proofs[0].Kind != "fork" || proofs[0].From() != 1 {
		t.Fatalf("proofs %+v", proofs)
	}
	found := false
	for len(sub.Events()) > 0 {
		if e := <-sub.Events(); e.Kind == engine.EventLine && e.Proof.Kind == "fork" {
			found = true
		}
	}
	if !found {
		t.Fatal("no fork event")
	}
	// A break found when the version log.prev names arrives after it.
	x := writer(t, sp)
	y := writer(t, sp)
	y0 := must[*record.Version](t)(y.First("app.chat", "y0"))
	o := canonical.NewObject("body", "x", "key", must[string](t)(record.FreshKey(x.Key.DID())), "seq", float64(0),
		"collection", "app.chat", "space", sp, "createdAt", "2026-09-26T12:00:00Z", "log", canonical.NewObject("n", float64(1), "prev", y0.ID))
	xb := must[*record.Version](t)(record.Sign(o, x.Key))
	admit(t, s, "p", xb)
	admit(t, s, "p", y0)
	proofs = must[[]*record.LineProof](t)(s.LineProofs(ctx, sp))
	if len(proofs) != 2 {
		t.Fatalf("want a fork and a break, got %d proofs", len(proofs))
	}
	// A fork below the line's highest place held: places 0–2, then
	// another version at 1.
	z := writer(t, sp)
	z0 := must[*record.Version](t)(z.First("app.chat", "z0"))
	z1 := must[*record.Version](t)(z.First("app.chat", "z1"))
	z2 := must[*record.Version](t)(z.First("app.chat", "z2"))
	admit(t, s, "p", z0, z1, z2)
	z.Fork("app.chat")
	z.Fork("app.chat")
	z1b := must[*record.Version](t)(z.First("app.chat", "z1 again"))
	admit(t, s, "p", z1b)
	if ids := must[[]string](t)(s.Line(ctx, sp, z.Key.DID(), "app.chat", 1)); len(ids) != 2 {
		t.Fatalf("line place 1 after a fork below the top: %v", ids)
	}
	proofs = must[[]*record.LineProof](t)(s.LineProofs(ctx, sp))
	if len(proofs) != 3 {
		t.Fatalf("want two forks and a break, got %d proofs", len(proofs))
	}
	clean(t, s)
}

// 02 §9.5: standing changes later; the first that stands is what reads.
func (h *harness) testStanding(t *testing.T) {
	sp := SpaceID("standing")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "0", Retain))
	a1 := must[*record.Version](t)(w.Next(a0, "1"))
	a2 := must[*record.Version](t)(w.Next(a1, "2"))
	s := h.store(t, nil)
	admit(t, s, "p", a0, a1, a2)
	if err := s.SetStanding(ctx, Digest(a2), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	if got := currentID(t, s, sp, a0.Key); got != "" {
		t.Fatalf("a1 is a stub, so the record reads as not held; got %s", got)
	}
	want(t, admit(t, s, "p", a1)[0], engine.Stands, engine.Whole) // it reads now: its body is kept
	if got := currentID(t, s, sp, a0.Key); got != a1.ID {
		t.Fatalf("current %s, want a1", got)
	}
	if err := s.SetStanding(ctx, Digest(a1), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	if got := currentID(t, s, sp, a0.Key); got != a0.ID {
		t.Fatalf("current %s, want the retained a0", got)
	}
	if st := storedAs(t, s, a1); st != engine.Stub {
		t.Fatalf("withdrawn a1 kept whole: %v", st)
	}
	if st := storedAs(t, s, a2); st != engine.Whole {
		t.Fatalf("the top a2 lost its body: %v", st)
	}
	if err := s.SetStanding(ctx, Digest(a2), engine.Stands); err != nil {
		t.Fatal(err)
	}
	if got := currentID(t, s, sp, a0.Key); got != a2.ID {
		t.Fatalf("current %s, want a2 again", got)
	}
	v, _, err := s.Standing(ctx, Digest(a1))
	if err != nil || v != engine.Withdrawn {
		t.Fatalf("a1 standing %v %v", v, err)
	}
	clean(t, s)
}

func (h *harness) testEvents(t *testing.T) {
	sp := SpaceID("events")
	w := writer(t, sp)
	s := h.store(t, nil)
	sub := s.Subscribe(sp, 64)
	other := s.Subscribe(SpaceID("elsewhere"), 64)
	a0 := must[*record.Version](t)(w.First("app.note", "0"))
	a1 := must[*record.Version](t)(w.Next(a0, "1"))
	admit(t, s, "p", a0, a1)
	var kinds []engine.EventKind
	var cur []string
	seqOf := map[string]uint64{}
	for len(sub.Events()) > 0 {
		e := <-sub.Events()
		kinds = append(kinds, e.Kind)
		if e.Kind == engine.EventCurrent {
			cur = append(cur, e.ID)
		}
		if e.Kind == engine.EventAdmitted {
			if e.Version == nil || e.Version.ID != e.ID {
				t.Fatalf("the admitted event of %s carries the version %v", e.ID, e.Version)
			}
			seqOf[e.ID] = e.Seq
		}
	}
	if len(cur) != 2 || cur[0] != a0.ID || cur[1] != a1.ID {
		t.Fatalf("current events %v (kinds %v)", cur, kinds)
	}
	// Each admitted event names its change in the change log.
	n := 0
	for c, err := range s.Changes(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if seq, ok := seqOf[c.ID.String()]; !ok || seq != c.Seq {
			t.Fatalf("change %d is %s; its admitted event says %d (%v)", c.Seq, c.ID, seq, ok)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d changes, want 2", n)
	}
	// A standing change is in the change log with its batch, not in Changes.
	if err := s.SetStanding(ctx, Digest(a1), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	var stood engine.Event
	for len(sub.Events()) > 0 {
		if e := <-sub.Events(); e.Kind == engine.EventStanding {
			stood = e
		}
	}
	var log []engine.Change
	for c, err := range s.ChangeLog(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, c)
	}
	if len(log) != 3 || log[2].ID != Digest(a1) || log[2].Kind != engine.Withdrew || log[2].Seq != 3 || stood.Seq != 3 || stood.Version == nil {
		t.Fatalf("after withdrawing a1: change log %+v, event %+v", log, stood)
	}
	n = 0
	for _, err := range s.Changes(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("Changes yields %d after a standing change, want the 2 versions", n)
	}
	if len(other.Events()) != 0 {
		t.Fatal("another space's subscriber got events")
	}
	sub.Close()
	other.Close()
}

func (h *harness) testSyncOrder(t *testing.T) {
	sp := SpaceID("order")
	vs := CorpusVersions(t, sp, CorpusOptions{Versions: 40, Seed: 5})
	s := h.store(t, nil)
	admit(t, s, "p", vs...)
	var items []engine.SyncItem
	for it, err := range s.SyncOrder(ctx, sp, engine.SyncKey{}) {
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if len(items) != len(vs) {
		t.Fatalf("%d items, %d versions", len(items), len(vs))
	}
	for i := 1; i < len(items); i++ {
		a, b := items[i-1], items[i]
		if a.Millis > b.Millis || a.Millis == b.Millis && string(a.Digest[:]) >= string(b.Digest[:]) {
			t.Fatal("sync order not ascending")
		}
	}
	mid := items[len(items)/2]
	n := 0
	for it, err := range s.SyncOrder(ctx, sp, mid.Key()) {
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && it != mid {
			t.Fatalf("from a bound: first %+v, want %+v", it, mid)
		}
		n++
	}
	if n != len(items)-len(items)/2 {
		t.Fatalf("from the middle: %d items", n)
	}
	var last uint64
	seen := map[string]bool{}
	for c, err := range s.Changes(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Seq != last+1 {
			t.Fatalf("change %d after %d", c.Seq, last)
		}
		last = c.Seq
		seen[c.ID.String()] = true
	}
	if len(seen) != len(vs) {
		t.Fatalf("changes name %d versions, want %d", len(seen), len(vs))
	}
	k := 0
	for range s.Changes(ctx, last-3) {
		k++
	}
	if k != 3 {
		t.Fatalf("changes after %d: %d", last-3, k)
	}
}

func (h *harness) testFilesAndMeta(t *testing.T) {
	s := h.store(t, nil)
	data := []byte("a file named by a version")
	hash := canonical.IDOf(data)
	if ok := must[bool](t)(s.HasFile(ctx, hash)); ok {
		t.Fatal("has a file never put")
	}
	if err := s.PutFile(ctx, hash, []byte("other bytes")); !errors.Is(err, engine.ErrFileMismatch) {
		t.Fatalf("put under the wrong hash: %v", err)
	}
	if err := s.PutFile(ctx, hash, data); err != nil {
		t.Fatal(err)
	}
	if got := must[[]byte](t)(s.File(ctx, hash)); string(got) != string(data) {
		t.Fatal("file bytes differ")
	}
	if _, ok, _ := s.Meta(ctx, "writer"); ok {
		t.Fatal("meta before set")
	}
	if err := s.SetMeta(ctx, "writer", []byte("w1")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Meta(ctx, "writer"); err != nil || !ok || string(v) != "w1" {
		t.Fatalf("meta %q %v %v", v, ok, err)
	}
	clean(t, s)
}

// Check is honest: damage to an index is reported.
func (h *harness) testCheckFindsDamage(t *testing.T) {
	sp := SpaceID("damage")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "0"))
	kv := h.open(t)
	s, err := engine.Open(kv, &engine.Options{Judge: Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admit(t, s, "p", a0)
	clean(t, s)
	var orderKey []byte
	it, _ := kv.NewIter([]byte{'o'}, []byte{'p'})
	for it.Next() {
		orderKey = append([]byte(nil), it.Key()...)
	}
	it.Close()
	b, _ := kv.NewBatch()
	b.Delete(orderKey)
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	probs, err := s.Check(ctx, nil)
	if err != nil || len(probs) == 0 {
		t.Fatalf("check missed a lost sync-order entry: %v %v", probs, err)
	}
}
