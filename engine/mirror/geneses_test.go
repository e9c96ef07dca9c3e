package mirror_test

import (
	"context"
	"sync"
	"testing"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/space"
)

// judgedStore is a store under the full judge, which judges a space's
// versions only once it holds the space's genesis (docs/spaces.md §1).
func judgedStore(t *testing.T) *engine.Store {
	t.Helper()
	j := judge.NewSpaceJudge(&identity.Checker{})
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: j})
	if err != nil {
		t.Fatal(err)
	}
	j.Source = s
	t.Cleanup(func() { s.Close() })
	return s
}

// puts records the names a blob store is given, in order.
type puts struct {
	*folder.Store
	mu    sync.Mutex
	names []string
}

func (p *puts) Put(ctx context.Context, name string, data []byte) error {
	p.mu.Lock()
	p.names = append(p.names, name)
	p.mu.Unlock()
	return p.Store.Put(ctx, name, data)
}

// A space's genesis travels beside its segments: written before the
// segment that needs it, kept by a reader before it admits a version, so
// the versions a restore brings are judged, not left waiting; a genesis
// that a sync service brings after its segments wakes them; an object
// under geneses/ that is not the genesis its name says is skipped.
func TestGenesesTravelWithSegments(t *testing.T) {
	w, err := enginetest.NewWriter("")
	if err != nil {
		t.Fatal(err)
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "lists", Founders: []string{w.Key.DID()}, CreatedAt: "2026-09-26T12:00:00.000Z", Nonce: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	w.Space = g.ID
	a := judgedStore(t)
	if err := judge.AddGenesis(ctx, a, g); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		v, err := w.First("app.todo", canonical.NewObject("i", float64(i)))
		if err != nil {
			t.Fatal(err)
		}
		admitAll(t, a, v)
	}
	_, shared := sharedFolder(t)
	b := &puts{Store: shared}
	if _, err := newMirror(t, a, b, &mirror.Options{Geneses: judge.MirrorGeneses(a)}).Export(ctx); err != nil {
		t.Fatal(err)
	}
	if len(b.names) != 2 || b.names[0] != mirror.GenesisName(g.ID) {
		t.Fatalf("export put %v: want the genesis, then the segment", b.names)
	}

	stats := func(s *engine.Store) engine.Stats {
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// Restored with the geneses: every version judged and held.
	r := judgedStore(t)
	m := newMirror(t, r, shared, &mirror.Options{Geneses: judge.MirrorGeneses(r)})
	if _, err := m.Import(ctx); err != nil {
		t.Fatal(err)
	}
	if st := stats(r); st.Versions != 5 || st.Waiting != 0 || m.Stats().Geneses != 1 {
		t.Fatalf("restored with the geneses: %+v, %d geneses kept", st, m.Stats().Geneses)
	}
	if _, ok, err := judge.GenesisOf(ctx, r, g.ID); err != nil || !ok {
		t.Fatalf("the restored store holds no genesis: %v", err)
	}
	// Without them (as before they travelled), every version waits.
	bare := judgedStore(t)
	if _, err := newMirror(t, bare, shared, nil).Import(ctx); err != nil {
		t.Fatal(err)
	}
	if st := stats(bare); st.Versions != 0 || st.Waiting != 5 {
		t.Fatalf("restored without the geneses: %+v", st)
	}

	// A genesis that arrives after its segment, and a stray that is not
	// the genesis its name says.
	data, err := shared.Get(ctx, mirror.GenesisName(g.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := shared.Delete(ctx, mirror.GenesisName(g.ID)); err != nil {
		t.Fatal(err)
	}
	other := canonical.IDOf([]byte("not a genesis")).String()
	if err := shared.Put(ctx, mirror.GenesisName(other), []byte(`{"name":"not the one"}`)); err != nil {
		t.Fatal(err)
	}
	late := judgedStore(t)
	lm := newMirror(t, late, shared, &mirror.Options{Geneses: judge.MirrorGeneses(late)})
	if _, err := lm.Import(ctx); err != nil {
		t.Fatal(err)
	}
	if st := stats(late); st.Waiting != 5 {
		t.Fatalf("before its genesis arrives: %+v", st)
	}
	if err := shared.Put(ctx, mirror.GenesisName(g.ID), data); err != nil {
		t.Fatal(err)
	}
	if err := lm.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if st := stats(late); st.Versions != 5 || st.Waiting != 0 {
		t.Fatalf("once its genesis arrived: %+v", st)
	}
	if _, ok, _ := judge.GenesisOf(ctx, late, other); ok {
		t.Fatal("an object that is not the genesis its name says was kept")
	}
}
