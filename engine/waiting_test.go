package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// A store in layout 6 — waiting versions not filed by source — is brought
// up to this layout when opened: each waiting version is counted to the
// source that sent it, the bounds then apply, and it checks clean.
func TestWaitingUpgradeFromLayout6(t *testing.T) {
	ctx := context.Background()
	kv := memory.Open(nil)
	st, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	sp := enginetest.SpaceID("upgrade")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	var firsts []*record.Version
	for i, from := range []string{"a", "b", "b", "c"} {
		a0, _ := w.First("app.note", canonical.NewObject("n", float64(i)))
		a1, _ := w.Next(a0, canonical.NewObject("n", float64(i), "pad", strings.Repeat("z", 1000*(i+1))))
		firsts = append(firsts, a0)
		if _, err := st.Admit(ctx, from, []*record.Version{a1}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := st.Stats(ctx)
	sources, _ := st.WaitingSources(0)
	// What layout 6 held: no 'Q' table, the counters without waiting bytes.
	state, err := kv.Get([]byte("_state"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := engine.Layout6State(state)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := kv.NewBatch()
	it, _ := kv.NewIter([]byte{'Q'}, []byte{'R'})
	for it.Next() {
		b.Delete(append([]byte(nil), it.Key()...))
	}
	it.Close()
	b.Set([]byte("_state"), old)
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	up, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}, Waiting: engine.WaitingLimits{MaxBytesPerSource: 6000}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := up.Stats(ctx)
	// b's older version is past its new bound of 6,000 bytes.
	if got.Waiting != 3 || got.WaitingDropped != 1 || got.WaitingBytes >= before.WaitingBytes {
		t.Fatalf("upgraded: %+v, before %+v", got, before)
	}
	after, _ := up.WaitingSources(0)
	if len(after) != len(sources) || after[0].From != "c" || after[1].From != "b" || after[1].Versions != 1 {
		t.Fatalf("sources %+v, before %+v", after, sources)
	}
	if probs, err := up.Check(ctx, nil); err != nil || len(probs) > 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
	outs, err := up.Admit(ctx, "a", firsts)
	if err != nil {
		t.Fatal(err)
	}
	stood := 0
	for _, o := range outs {
		if o.Verdict == engine.Stands {
			stood++
		}
	}
	if s, _ := up.Stats(ctx); stood != 4 || s.Waiting != 0 || s.Versions != 7 {
		t.Fatalf("after the first versions: %+v", s)
	}
}
