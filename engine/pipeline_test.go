package engine_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// batchLog records what a pipeline's stages were told, in order.
type batchLog struct {
	mu      sync.Mutex
	decided []int
	done    []int
	results map[int]engine.Result
}

func (l *batchLog) stages(vs [][]*record.Version, done func(int, engine.Result) error) engine.Stages[int] {
	l.results = map[int]engine.Result{}
	return engine.Stages[int]{
		Versions: func(_ context.Context, i int) ([]*record.Version, error) { return vs[i], nil },
		Decided: func(i int) {
			l.mu.Lock()
			l.decided = append(l.decided, i)
			l.mu.Unlock()
		},
		Done: func(i int, r engine.Result) error {
			l.mu.Lock()
			l.done = append(l.done, i)
			l.results[i] = r
			l.mu.Unlock()
			if done != nil {
				return done(i, r)
			}
			return nil
		},
	}
}

// chunks cuts vs into batches of n.
func chunks(vs []*record.Version, n int) [][]*record.Version {
	var bs [][]*record.Version
	for i := 0; i < len(vs); i += n {
		bs = append(bs, vs[i:min(i+n, len(vs))])
	}
	return bs
}

// A pipeline hands every batch to Decided and Done in order, each with one
// outcome per version; what it stored is counted from the batch itself,
// and a batch of copies already held stores nothing.
func TestPipelineAdmitsInOrder(t *testing.T) {
	ctx := context.Background()
	vs := pipelineCorpus(t)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bs := chunks(vs, 7)
	bs = append(bs, nil, vs[:7]) // nothing to admit; copies already held
	var l batchLog
	p := engine.NewPipeline(ctx, s, "p", l.stages(bs, nil))
	for i := range bs {
		if err := p.Add(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	want := make([]int, len(bs))
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(l.decided, want) || !slices.Equal(l.done, want) {
		t.Fatalf("decided %v, done %v: want %v", l.decided, l.done, want)
	}
	stored := 0
	for i, b := range bs {
		r := l.results[i]
		if r.Err != nil || len(r.Outcomes) != len(b) {
			t.Fatalf("batch %d: %d outcomes for %d versions (%v)", i, len(r.Outcomes), len(b), r.Err)
		}
		for k, o := range r.Outcomes {
			if o.ID != b[k].ID || o.Verdict != engine.Stands {
				t.Fatalf("batch %d: %s %v for %s", i, o.ID, o.Verdict, b[k].ID)
			}
		}
		stored += r.Stored
	}
	if r := l.results[len(bs)-1]; r.Stored != 0 || r.Outcomes[0].New {
		t.Fatalf("copies already held stored %d (new %v)", r.Stored, r.Outcomes[0].New)
	}
	if st, _ := s.Stats(ctx); stored != len(vs) || st.Versions != int64(len(vs)) {
		t.Fatalf("stored %d, store holds %d, want %d", stored, st.Versions, len(vs))
	}
	if err := p.Add(ctx, 0); !errors.Is(err, engine.ErrPipelineClosed) {
		t.Fatalf("add after close: %v", err)
	}
}

// A batch decided while the one before it commits fails with it when that
// commit fails: Done is given the error for both, none of either is held,
// and the pipeline goes on with the next batch.
func TestPipelineFailsOnFailedBatch(t *testing.T) {
	ctx := context.Background()
	vs := pipelineCorpus(t)
	kv := &heldKV{Store: memory.Open(nil), release: make(chan error)}
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bs := [][]*record.Version{vs[:20], vs[20:40], vs[40:]}
	var l batchLog
	p := engine.NewPipeline(ctx, s, "p", l.stages(bs, nil))
	for i := range 2 {
		if err := p.Add(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.decided) == 2 })
	boom := errors.New("disk on fire")
	kv.release <- boom
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if r := l.results[i]; !errors.Is(r.Err, boom) || r.Stored != 0 {
			t.Fatalf("batch %d: %v, stored %d; want it failed", i, r.Err, r.Stored)
		}
	}
	if st, _ := s.Stats(ctx); st != (engine.Stats{}) {
		t.Fatalf("stats after two failed batches: %+v", st)
	}
	close(kv.releaseAll())
	if err := p.Add(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if r := l.results[2]; r.Err != nil || r.Stored == 0 {
		t.Fatalf("batch after the failed ones: %v, stored %d", r.Err, r.Stored)
	}
}

// An error from Versions fails its batch alone; an error from Done stops
// the pipeline: Add and Close return it, later batches are still decided
// (and told to Decided) but not handed to Done.
func TestPipelineStops(t *testing.T) {
	ctx := context.Background()
	vs := pipelineCorpus(t)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bs := chunks(vs, 10)
	unreadable := errors.New("unreadable")
	stop := errors.New("stop")
	var l batchLog
	st := l.stages(bs, func(i int, r engine.Result) error {
		if i == 3 {
			return stop
		}
		return nil
	})
	versions := st.Versions
	st.Versions = func(ctx context.Context, i int) ([]*record.Version, error) {
		if i == 1 {
			return nil, unreadable
		}
		return versions(ctx, i)
	}
	p := engine.NewPipeline(ctx, s, "p", st)
	var addErr error
	added := 0
	for i := range bs {
		if addErr = p.Add(ctx, i); addErr != nil {
			break
		}
		added++
	}
	if err := p.Close(); !errors.Is(err, stop) {
		t.Fatalf("close: %v", err)
	}
	if addErr != nil && !errors.Is(addErr, stop) {
		t.Fatalf("add: %v", addErr)
	}
	if r := l.results[1]; !errors.Is(r.Err, unreadable) || r.Outcomes != nil {
		t.Fatalf("batch 1: %+v", r)
	}
	if r := l.results[2]; r.Err != nil || r.Stored == 0 {
		t.Fatalf("batch 2, after a failed one: %+v", r)
	}
	if !slices.Equal(l.done, []int{0, 1, 2, 3}) {
		t.Fatalf("done %v: want 0–3", l.done)
	}
	if len(l.decided) != added {
		t.Fatalf("decided %v of %d added", l.decided, added)
	}
	if err := p.Add(ctx, 0); !errors.Is(err, engine.ErrPipelineClosed) {
		t.Fatalf("add after close: %v", err)
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// Stages.Before gates a decided batch's commit: nothing of the batch is in
// the store until it returns, the batch is decided meanwhile, and when it
// fails the batch fails as a failed commit does — with the batch decided
// after it — and none of either is held.
func TestPipelineBeforeGatesTheCommit(t *testing.T) {
	ctx := context.Background()
	vs := pipelineCorpus(t)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bs := [][]*record.Version{vs[:20], vs[20:40], vs[40:]}
	var l batchLog
	st := l.stages(bs, nil)
	gates := []chan error{make(chan error), make(chan error), make(chan error)}
	asked := make(chan int, len(bs))
	st.Before = func(i int) error {
		asked <- i
		return <-gates[i]
	}
	p := engine.NewPipeline(ctx, s, "p", st)
	if err := p.Add(ctx, 0); err != nil {
		t.Fatal(err)
	}
	askedFor := func(want int) {
		t.Helper()
		select {
		case i := <-asked:
			if i != want {
				t.Fatalf("Before asked for batch %d, want %d", i, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("a decided batch %d committed without asking Before", want)
		}
	}
	askedFor(0)
	// Batch 0 is decided and waits at its gate: none of it is held.
	waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.decided) == 1 })
	if _, err := s.Version(ctx, digest(t, vs[0])); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a version of a batch held at its gate reads as %v", err)
	}
	gates[0] <- nil
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if r := l.results[0]; r.Err != nil || r.Stored != 20 {
		t.Fatalf("batch 0 through its gate: %v, stored %d", r.Err, r.Stored)
	}
	// Batch 1's gate fails with batch 2 decided behind it: both fail.
	for i := 1; i < 3; i++ {
		if err := p.Add(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	askedFor(1)
	waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.decided) == 3 })
	boom := errors.New("places not synced")
	gates[1] <- boom
	close(gates[2]) // were batch 2 to reach its gate, it would pass
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		if r := l.results[i]; r.Err == nil || r.Stored != 0 {
			t.Fatalf("batch %d behind a failed gate: %v, stored %d; want it failed", i, r.Err, r.Stored)
		}
	}
	if r := l.results[1]; !errors.Is(r.Err, boom) {
		t.Fatalf("batch 1 failed with %v, want its gate's error", r.Err)
	}
	if st, _ := s.Stats(ctx); st.Versions != 20 {
		t.Fatalf("the store holds %d versions, want batch 0's 20", st.Versions)
	}
	for _, v := range vs[20:] {
		if _, err := s.Version(ctx, digest(t, v)); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("a version of a failed batch reads as %v", err)
		}
	}
}

func digest(t *testing.T, v *record.Version) canonical.ID {
	t.Helper()
	d, ok := v.Digest()
	if !ok {
		t.Fatalf("version %s has no digest", v.ID)
	}
	return d
}
