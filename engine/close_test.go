package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// pebbleStoreNaming is a Pebble store holding a version naming 300 files,
// every other one held.
func pebbleStoreNaming(t *testing.T) (*engine.Store, string, []record.File) {
	t.Helper()
	ctx := context.Background()
	kv, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}, Files: engine.NewMemoryFiles()})
	if err != nil {
		t.Fatal(err)
	}
	sp := enginetest.SpaceID("close")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	var refs []record.File
	for i := range 300 {
		data := fmt.Appendf(nil, "file %d", i)
		if i%2 == 0 {
			if err := s.PutFile(ctx, canonical.IDOf(data), data); err != nil {
				t.Fatal(err)
			}
		}
		refs = append(refs, record.File{Hash: canonical.IDOf(data), Size: int64(len(data))})
	}
	v, err := w.First("app.album", canonical.NewObject("n", 1.0), func(d *record.Draft) { d.Files = refs })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(ctx, "p", []*record.Version{v}); err != nil {
		t.Fatal(err)
	}
	return s, sp, refs
}

// A read in flight as the store closes (its iterator open, its caller
// slow) is waited for and stops at its next step with ErrClosed; Close
// reports nothing leaked (a Pebble store closed under an open iterator
// reports "leaked iterators", and the read fails with damage).
func TestCloseWaitsForAReadInFlight(t *testing.T) {
	ctx := context.Background()
	s, _, _ := pebbleStoreNaming(t)
	inside, release := make(chan struct{}), make(chan struct{})
	type result struct {
		n   int
		err error
	}
	slow := make(chan result, 1)
	go func() {
		n := 0
		err := s.Files(ctx, func(engine.FileInfo) bool {
			if n == 0 {
				close(inside)
				<-release
			}
			n++
			return true
		})
		slow <- result{n, err}
	}()
	<-inside
	engine.OnCloseWaiting(s, func() { close(release) })
	closeErr := s.Close()
	select {
	case <-release:
	default:
		close(release) // Close did not wait: the read goes on, to its end
	}
	if r := <-slow; !errors.Is(r.err, engine.ErrClosed) || r.n != 1 {
		t.Errorf("a read in flight as the store closed: %d files of 150, then %v; want 1, then ErrClosed", r.n, r.err)
	}
	if closeErr != nil {
		t.Errorf("closed under a read: %v", closeErr)
	}
}

// Reads started again and again as the store closes each end whole or
// with ErrClosed, and Close reports nothing leaked.
func TestCloseUnderManyReads(t *testing.T) {
	ctx := context.Background()
	s, sp, refs := pebbleStoreNaming(t)
	reads := []func() error{
		func() error { return s.Files(ctx, func(engine.FileInfo) bool { return true }) },
		func() error { return s.NamedFiles(ctx, sp, func(engine.NamedFile) bool { return true }) },
		func() error { return s.MissingFiles(ctx, sp, func(engine.NamedFile) bool { return true }) },
		func() error { _, err := s.HasFile(ctx, refs[0].Hash); return err },
	}
	var wg sync.WaitGroup
	n := len(reads) * 2
	started := make(chan struct{}, n)
	errs := make(chan error, n)
	for i := range n {
		read := reads[i%len(reads)]
		wg.Go(func() {
			for k := 0; ; k++ {
				if k == 1 {
					started <- struct{}{}
				}
				if err := read(); err != nil {
					if !errors.Is(err, engine.ErrClosed) {
						errs <- err
					}
					return
				}
			}
		})
	}
	for range n {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Errorf("closed under reads: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a read as the store closed: %v", err)
	}
}
