package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// What is read ahead for a batch before it is submitted is used when
// nothing committed since, or one batch did (its keys are read again),
// and not when more did: a version stored in between is held, not stored
// again, either way.
func TestReadAheadBeside(t *testing.T) {
	ctx := context.Background()
	w, err := enginetest.NewWriter(enginetest.SpaceID("read ahead beside"))
	if err != nil {
		t.Fatal(err)
	}
	v := mustV(t)
	v0, v1, v2, v3 := v(w.First("app.chat", "0")), v(w.First("app.chat", "1")), v(w.First("app.chat", "2")), v(w.First("app.chat", "3"))
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admit := func(v *record.Version, between func()) (engine.Outcome, bool) {
		t.Helper()
		a, err := s.ReadAhead([]*record.Version{v})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Prepare(ctx, []*record.Version{v})
		if err != nil {
			t.Fatal(err)
		}
		p.ReadAhead(a)
		between()
		outs, err := s.AdmitPrepared(ctx, "p", p)
		if err != nil || len(outs) != 1 {
			t.Fatalf("admit %s: %v %v", v.ID, outs, err)
		}
		return outs[0], engine.ReadAheadKept(p)
	}
	// Nothing between: what was read is what the decision reads.
	if o, kept := admit(v0, func() {}); !o.New || o.Verdict != engine.Stands || kept {
		t.Fatalf("v0: %+v, reads kept %v", o, kept)
	}
	// v1 stored by the one batch committed between the reads (not held
	// then) and the decision: the reads are used, but not of its keys.
	if o, kept := admit(v1, func() { admitAll(t, s, v1) }); o.New || o.Verdict != engine.Stands || kept {
		t.Fatalf("v1 stored in between: %+v, reads kept %v", o, kept)
	}
	// Two batches between, the first storing v2: nothing read is used.
	if o, kept := admit(v2, func() { admitAll(t, s, v2); admitAll(t, s, v3) }); o.New || o.Verdict != engine.Stands || !kept {
		t.Fatalf("v2 stored two batches before: %+v, reads kept %v", o, kept)
	}
	if st, _ := s.Stats(ctx); st.Versions != 4 {
		t.Fatalf("the store holds %d versions, want 4", st.Versions)
	}
}

// A pipeline whose batches are read ahead — before they are added, while
// the batches before are under way, or on the checking stage, beside the
// decision of the one before — admits as one that does not: each batch
// repeats the one before it (perhaps checked, decided or committing as
// its reads are made), and the copies are held, not new.
func TestPipelineReadAhead(t *testing.T) {
	ctx := context.Background()
	vs := pipelineCorpus(t)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var bs [][]*record.Version
	for i := 0; i < len(vs); i += 5 {
		bs = append(bs, vs[max(0, i-5):min(i+5, len(vs))])
	}
	var l batchLog
	st := l.stages(bs, nil)
	aheads := make([]*engine.Ahead, len(bs))
	st.ReadAhead = func(i int) *engine.Ahead {
		if i%2 == 1 {
			a, err := s.ReadAhead(bs[i])
			if err != nil {
				t.Error(err)
			}
			return a
		}
		return aheads[i]
	}
	p := engine.NewPipeline(ctx, s, "p", st)
	for i := range bs {
		if i%2 == 0 {
			a, err := s.ReadAhead(bs[i])
			if err != nil {
				t.Fatal(err)
			}
			aheads[i] = a
		}
		if err := p.Add(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	stored := 0
	for i, b := range bs {
		r := l.results[i]
		if r.Err != nil || len(r.Outcomes) != len(b) {
			t.Fatalf("batch %d: %d outcomes for %d versions (%v)", i, len(r.Outcomes), len(b), r.Err)
		}
		for k, o := range r.Outcomes {
			repeat := i > 0 && k < 5
			if o.ID != b[k].ID || o.Verdict != engine.Stands || o.New == repeat {
				t.Fatalf("batch %d: %s %v new %v for %s (a copy of the batch before: %v)", i, o.ID, o.Verdict, o.New, b[k].ID, repeat)
			}
		}
		stored += r.Stored
	}
	if st, _ := s.Stats(ctx); stored != len(vs) || st.Versions != int64(len(vs)) {
		t.Fatalf("stored %d, store holds %d, want %d", stored, st.Versions, len(vs))
	}
}

// A batch's places in one line are read ahead as one range: when the store
// holds none of them, the batch is stored as new; when it holds a version
// at one of them (a fork, 02 §4.10), the reads of those places find it and
// the fork is proven, as without reading ahead.
func TestReadAheadOfALine(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("read ahead of a line")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	v := mustV(t)
	var vs []*record.Version
	for i := range 5 {
		vs = append(vs, v(w.First("app.chat", fmt.Sprint(i))))
	}
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admit := func(batch ...*record.Version) []engine.Outcome {
		t.Helper()
		a, err := s.ReadAhead(batch)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Prepare(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		p.ReadAhead(a)
		outs, err := s.AdmitPrepared(ctx, "p", p)
		if err != nil || len(outs) != len(batch) {
			t.Fatalf("admit: %v %v", outs, err)
		}
		if engine.ReadAheadKept(p) {
			t.Fatal("what was read ahead was not used")
		}
		return outs
	}
	admitAll(t, s, vs[0], vs[1])
	for i, o := range admit(vs[2], vs[3], vs[4]) { // places 2–4, none held
		if !o.New || o.Verdict != engine.Stands {
			t.Fatalf("place %d: %+v", i+2, o)
		}
	}
	if ps, err := s.LineProofs(ctx, sp); err != nil || len(ps) != 0 {
		t.Fatalf("proofs %v %v after a line written once", ps, err)
	}
	// The key's copy signs at places 3 and 4 again: the store holds both.
	w.Fork("app.chat")
	w.Fork("app.chat")
	f3, f4 := v(w.First("app.chat", "3 again")), v(w.First("app.chat", "4 again"))
	if f3.Log.N != 3 || f4.Log.N != 4 {
		t.Fatalf("the copy signed at %d and %d", f3.Log.N, f4.Log.N)
	}
	admit(f3, f4)
	ps, err := s.LineProofs(ctx, sp)
	if err != nil || len(ps) != 2 {
		t.Fatalf("%d proofs (%v): want the forks at 3 and 4", len(ps), err)
	}
	for _, p := range ps {
		if p.Kind != "fork" || p.From() != 3 && p.From() != 4 {
			t.Fatalf("a proof of a %s from %d: want forks at 3 and 4", p.Kind, p.From())
		}
	}
	if ids, err := s.Line(ctx, sp, w.Key.DID(), "app.chat", 4); err != nil || len(ids) != 2 {
		t.Fatalf("place 4 holds %v %v, want both", ids, err)
	}
}

// countingKV counts the keys looked up with GetMany.
type countingKV struct {
	*memory.Store
	got int
}

func (c *countingKV) GetMany(ks [][]byte, found func(int, []byte)) error {
	c.got += len(ks)
	return c.Store.GetMany(ks, found)
}

// A batch read ahead with its fresh records named reads neither their
// heads nor the ids at line places found free, and is stored as one read
// whole; versions at held places are still found held (their ids read).
func TestReadAheadFresh(t *testing.T) {
	ctx := context.Background()
	w, err := enginetest.NewWriter(enginetest.SpaceID("read ahead fresh"))
	if err != nil {
		t.Fatal(err)
	}
	v := mustV(t)
	var vs []*record.Version
	for i := range 7 {
		vs = append(vs, v(w.First("app.chat", fmt.Sprint(i))))
	}
	kv := &countingKV{Store: memory.Open(nil)}
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admit := func(fresh []bool, batch ...*record.Version) ([]engine.Outcome, int) {
		t.Helper()
		kv.got = 0
		a, err := s.ReadAheadFresh(batch, fresh)
		if err != nil {
			t.Fatal(err)
		}
		read := kv.got
		p, err := s.Prepare(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		p.ReadAhead(a)
		outs, err := s.AdmitPrepared(ctx, "p", p)
		if err != nil || len(outs) != len(batch) {
			t.Fatalf("admit: %v %v", outs, err)
		}
		if engine.ReadAheadKept(p) {
			t.Fatal("what was read ahead was not used")
		}
		return outs, read
	}
	all := []bool{true, true, true}
	admitAll(t, s, vs[0], vs[1])
	// Held places: the ids are read and found, fresh or not.
	outs, read := admit(all[:2], vs[0], vs[1])
	for i, o := range outs {
		if o.New {
			t.Fatalf("held version %d stored again: %+v", i, o)
		}
	}
	if read < 2 {
		t.Fatalf("%d keys read for two versions at held places: want their ids", read)
	}
	// Free places, fresh records: nothing to read.
	outs, read = admit(all, vs[2], vs[3], vs[4])
	for i, o := range outs {
		if !o.New || o.Verdict != engine.Stands {
			t.Fatalf("place %d: %+v", i+2, o)
		}
	}
	if read != 0 {
		t.Fatalf("%d keys read for fresh records at free places", read)
	}
	// Not named fresh: their heads are read.
	if _, read = admit(nil, vs[5], vs[6]); read < 2 {
		t.Fatalf("%d keys read for two records not named fresh: want their heads", read)
	}
	for _, x := range vs {
		d, _ := x.Digest()
		got, err := s.Version(ctx, d)
		if err != nil || got.ID != x.ID {
			t.Fatalf("%s: %v %v", x.ID, got, err)
		}
	}
	if st, err := s.Stats(ctx); err != nil || st.Versions != int64(len(vs)) {
		t.Fatalf("stats %+v %v: want %d versions", st, err, len(vs))
	}
}
