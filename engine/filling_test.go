package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// kindCounter counts the keys looked up, with Get and GetMany, by their
// table byte.
type kindCounter struct {
	*memory.Store
	mu  sync.Mutex
	got map[byte]int
}

func newKindCounter() *kindCounter {
	return &kindCounter{Store: memory.Open(nil), got: map[byte]int{}}
}

// admitFilled admits batch into s as one of fill's batches.
func admitFilled(t *testing.T, s *engine.Store, fill *engine.Filling, batch []*record.Version) []engine.Outcome {
	t.Helper()
	ctx := context.Background()
	p, err := s.Prepare(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	p.Fill(fill)
	outs, err := s.AdmitPrepared(ctx, "p", p)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// openCounted is a store over a kindCounter, closed when t ends.
func openCounted(t *testing.T) (*engine.Store, *kindCounter) {
	t.Helper()
	kv := newKindCounter()
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, kv
}

func (c *kindCounter) count(k []byte) {
	c.mu.Lock()
	c.got[k[0]]++
	c.mu.Unlock()
}

func (c *kindCounter) Get(k []byte) ([]byte, error) {
	c.count(k)
	return c.Store.Get(k)
}

func (c *kindCounter) GetMany(ks [][]byte, found func(int, []byte)) error {
	for _, k := range ks {
		c.count(k)
	}
	return c.Store.GetMany(ks, found)
}

// told is how many ids, heads and line places were looked up since the
// last call.
func (c *kindCounter) told() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.got['e'] + c.got['h'] + c.got['l']
	clear(c.got)
	return n
}

// fillBatches cuts a corpus into batches that a sync could bring: each
// repeats the last three versions of the one before (copies held), and
// each fourth version comes first as its stub, its whole copy in the
// batch after.
func fillBatches(vs []*record.Version) [][]*record.Version {
	var bs [][]*record.Version
	var stubs []*record.Version
	for i := 0; i < len(vs); i += 20 {
		b := slices.Clone(stubs)
		stubs = nil
		if i > 0 {
			b = append(b, vs[i-3:i]...)
		}
		for k, v := range vs[i:min(i+20, len(vs))] {
			if k%4 == 3 {
				b = append(b, v.Stub())
				stubs = append(stubs, v)
				continue
			}
			b = append(b, v)
		}
		bs = append(bs, b)
	}
	return append(bs, stubs)
}

// admitPiped admits bs through a pipeline, filling with fill (nil: as any
// source), and returns each batch's outcomes.
func admitPiped(t *testing.T, s *engine.Store, bs [][]*record.Version, fill *engine.Filling) [][]engine.Outcome {
	t.Helper()
	ctx := context.Background()
	var l batchLog
	st := l.stages(bs, nil)
	st.Fill = fill
	p := engine.NewPipeline(ctx, s, "p", st)
	for i := range bs {
		if err := p.Add(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	outs := make([][]engine.Outcome, len(bs))
	for i, b := range bs {
		r := l.results[i]
		if r.Err != nil || len(r.Outcomes) != len(b) {
			t.Fatalf("batch %d: %d outcomes for %d versions (%v)", i, len(r.Outcomes), len(b), r.Err)
		}
		outs[i] = r.Outcomes
	}
	return outs
}

// sameStores requires two stores to hold the same: counts, every
// version as held (whole or stub), and both check clean.
func sameStores(t *testing.T, a, b *engine.Store, vs []*record.Version) {
	t.Helper()
	ctx := context.Background()
	sa, err := a.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sa.Versions != sb.Versions || sa.Whole != sb.Whole || sa.Stubs != sb.Stubs || sa.Waiting != sb.Waiting {
		t.Fatalf("filled: %+v; admitted as any source: %+v", sa, sb)
	}
	for _, v := range vs {
		d := enginetest.Digest(v)
		va, ha, ea := a.Standing(ctx, d)
		vb, hb, eb := b.Standing(ctx, d)
		if va != vb || ha != hb || (ea == nil) != (eb == nil) {
			t.Fatalf("%s: filled %v %v %v; as any source %v %v %v", v.ID, va, ha, ea, vb, hb, eb)
		}
	}
	for _, s := range []*engine.Store{a, b} {
		if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
			t.Fatalf("check: %v %v", probs, err)
		}
	}
}

// A source filling an empty space looks up only what its own batches
// wrote — the heads of records it stored a version of, the ids it was
// sent again — not the id, head and line place of each new version; and
// what it stores, and each outcome, is what any source's batches give:
// copies of versions it stored are held, whole copies of its stubs add
// their bodies, edits build on the versions before them.
func TestFillingReadsOnlyWhatItWrote(t *testing.T) {
	sp := enginetest.SpaceID("filling")
	vs := enginetest.CorpusVersions(t, sp, enginetest.CorpusOptions{Versions: 300, Seed: 7})
	bs := fillBatches(vs)

	plain, plainKV := openCounted(t)
	plainKV.told()
	want := admitPiped(t, plain, bs, nil)
	plainReads := plainKV.told()

	s, kv := openCounted(t)
	kv.told()
	got := admitPiped(t, s, bs, engine.NewFilling(sp))
	reads := kv.told()

	for i := range bs {
		for k := range bs[i] {
			if g, w := got[i][k], want[i][k]; g.ID != w.ID || g.Verdict != w.Verdict || g.New != w.New || g.Stored != w.Stored || g.Top != w.Top {
				t.Fatalf("batch %d, %s: filled %+v, as any source %+v", i, bs[i][k].ID, g, w)
			}
		}
	}
	sameStores(t, s, plain, vs)
	// Each batch repeats three versions and brings its stubs' whole
	// copies: some 150 ids the source wrote, and the heads of the
	// records edited across batches, against the 700 or so of any source.
	if reads*2 > plainReads || plainReads < len(vs)*2 {
		t.Fatalf("ids, heads and places looked up: %d filling, %d as any source", reads, plainReads)
	}
	t.Logf("ids, heads and places looked up: %d filling, %d as any source", reads, plainReads)
}

// Another batch decided in the store ends what a Filling knows, whatever
// it wrote: a version another source stored in between, which the
// filling source is then sent, is held, not stored again; and a space
// that held something is read for as any other.
func TestFillingEndsWhenAnotherWrites(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("filling, another writes")
	vs := enginetest.CorpusVersions(t, sp, enginetest.CorpusOptions{Versions: 80, Seed: 8})
	other := enginetest.CorpusVersions(t, enginetest.SpaceID("another space"), enginetest.CorpusOptions{Versions: 5, Seed: 9})

	s, kv := openCounted(t)
	fill := engine.NewFilling(sp)
	admit := func(batch []*record.Version) []engine.Outcome {
		t.Helper()
		return admitFilled(t, s, fill, batch)
	}
	admit(vs[:10])
	kv.told()
	if admit(vs[10:20]); kv.told() > 10 || !engine.Filled(s) {
		t.Fatal("the filling source's second batch looked up its new versions' keys")
	}
	// A change of standing is another batch too: it ends what the store
	// knew, though the space is not registered anew.
	if err := s.SetStanding(ctx, enginetest.Digest(vs[0]), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	if engine.Filled(s) {
		t.Fatal("a change of standing left what a Filling knew")
	}
	kv.told()
	if admit(vs[20:40]); kv.told() < 15 {
		t.Fatal("a batch after a change of standing did not look its versions' keys up")
	}
	// Another source stores vs[40:45]; the filling source is sent them
	// with vs[45:60].
	admitAll(t, s, vs[40:45]...)
	kv.told()
	outs := admit(vs[40:60])
	if kv.told() < 15 {
		t.Fatal("a batch after another's did not look its versions' keys up")
	}
	for i, o := range outs {
		if o.Verdict != engine.Stands || o.New != (i >= 5) {
			t.Fatalf("%s after another source stored vs[40:45]: %+v", vs[40+i].ID, o)
		}
	}
	// A batch of another space in between ends it too; the space is
	// registered now, so it never starts again.
	admitAll(t, s, other...)
	kv.told()
	admit(vs[60:])
	if kv.told() < 15 {
		t.Fatal("a batch after another space's did not look its versions' keys up")
	}
	if st, _ := s.Stats(ctx); st.Versions != int64(len(vs)+len(other)) {
		t.Fatalf("the store holds %d versions, want %d", st.Versions, len(vs)+len(other))
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check: %v %v", probs, err)
	}

	// A space that holds a version when the source starts: nothing is
	// known absent, and the held version is found held.
	sp2 := enginetest.SpaceID("filling, not empty")
	ws := enginetest.CorpusVersions(t, sp2, enginetest.CorpusOptions{Versions: 30, Seed: 10})
	held := slices.IndexFunc(ws[1:], func(v *record.Version) bool { return v.Seq == 0 }) + 1
	if held == 0 {
		t.Fatal("the corpus has one first version")
	}
	admitAll(t, s, ws[held])
	fill = engine.NewFilling(sp2)
	kv.told()
	outs = admit(ws)
	if kv.told() < len(ws) {
		t.Fatal("a batch into a space that held a version did not look its versions' keys up")
	}
	for i, o := range outs {
		if o.Verdict != engine.Stands || o.New != (i != held) {
			t.Fatalf("%s into a space holding ws[%d]: %+v", ws[i].ID, held, o)
		}
	}
}

// A Filling of one space tells nothing of versions of another in its
// batches: their keys are looked up, and one held before the source
// started is found held, not stored again.
func TestFillingOfOneSpaceOnly(t *testing.T) {
	ctx := context.Background()
	sp, sp2 := enginetest.SpaceID("filling one"), enginetest.SpaceID("filling two")
	vs := enginetest.CorpusVersions(t, sp, enginetest.CorpusOptions{Versions: 10, Seed: 11})
	ws := enginetest.CorpusVersions(t, sp2, enginetest.CorpusOptions{Versions: 10, Seed: 12})
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admitAll(t, s, ws...)
	fill := engine.NewFilling(sp)
	for i := range 3 {
		outs := admitFilled(t, s, fill, append(slices.Clone(vs[i*3:i*3+3]), ws...))
		for k, o := range outs {
			if o.Verdict != engine.Stands || o.New != (k < 3) {
				t.Fatalf("batch %d, %s: %+v", i, o.ID, o)
			}
		}
	}
	if st, _ := s.Stats(ctx); st.Versions != 19 {
		t.Fatalf("the store holds %d versions, want 19", st.Versions)
	}
}
