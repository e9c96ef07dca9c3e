package engine_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// slowSyncs is a FileDir whose files' syncs (Keep) wait at a gate,
// counting how many are inside at once.
type slowSyncs struct {
	engine.FileDir
	inside, most atomic.Int32
	entered      chan struct{} // a send as each sync begins
	gate         chan struct{}
}

func (d *slowSyncs) Partial(file canonical.ID) (engine.FileTemp, error) {
	t, err := d.FileDir.Partial(file)
	return &slowTemp{t, d}, err
}

type slowTemp struct {
	engine.FileTemp
	d *slowSyncs
}

func (t *slowTemp) Keep(file canonical.ID) error {
	n := t.d.inside.Add(1)
	for m := t.d.most.Load(); n > m && !t.d.most.CompareAndSwap(m, n); m = t.d.most.Load() {
	}
	t.d.entered <- struct{}{}
	<-t.d.gate
	t.d.inside.Add(-1)
	return t.FileTemp.Keep(file)
}

// Files kept at once are synced a bounded number at a time: each sync
// holds an OS thread while it blocks, so hundreds of small files arriving
// together (256 small transfers a connection) must not sync together.
// All are kept in the end.
func TestFileSyncsBounded(t *testing.T) {
	ctx := context.Background()
	dir := &slowSyncs{FileDir: engine.NewMemoryFiles(), entered: make(chan struct{}, 1000), gate: make(chan struct{})}
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}, Files: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const files = 100
	var wg sync.WaitGroup
	errs := make(chan error, files)
	for i := range files {
		data := fmt.Appendf(nil, "file %d", i)
		p, err := s.OpenPartial(ctx, engine.FileRef{Hash: canonical.IDOf(data), Size: int64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write(data); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs <- p.Keep(ctx) })
	}
	// Every sync the bound lets in reaches the gate; none past it while
	// they wait there.
	deadline := time.After(10 * time.Second)
	for range engine.MaxFileSyncs {
		select {
		case <-dir.entered:
		case <-deadline:
			t.Fatalf("%d syncs began; the bound lets in %d", dir.inside.Load(), engine.MaxFileSyncs)
		}
	}
	select {
	case <-dir.entered:
		t.Fatalf("a sync past the %d waiting began", engine.MaxFileSyncs)
	case <-time.After(100 * time.Millisecond):
	}
	close(dir.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := dir.most.Load(); m > engine.MaxFileSyncs {
		t.Fatalf("%d syncs at once; the bound is %d", m, engine.MaxFileSyncs)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != files {
		t.Fatalf("%d files held, want %d", st.Files, files)
	}
}
