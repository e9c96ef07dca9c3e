package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
)

// A store written in an earlier key layout is refused with a clear error,
// not misread.
func TestEarlierLayoutRefused(t *testing.T) {
	for _, l := range []byte{1, 2, 3, 4, 5} {
		kv := memory.Open(nil)
		b, _ := kv.NewBatch()
		// The counters of an earlier engine: its layout first.
		b.Set([]byte("_state"), []byte{l, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
		if _, err := engine.Open(kv, nil); !errors.Is(err, engine.ErrLayout) {
			t.Fatalf("layout %d: %v", l, err)
		}
	}
}

// A store that kept files in its KV ('F', before FileDir) has them moved
// to its FileDir when it opens to write, counted as before.
func TestOldFilesMoved(t *testing.T) {
	ctx := context.Background()
	kv := keepKV{memory.Open(nil)}
	s, err := engine.Open(kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("a file kept the old way")
	d := canonical.IDOf(data)
	if err := s.PutFile(ctx, d.String(), data); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// As an earlier engine left it: the bytes under 'F', no 'f'.
	b, _ := kv.NewBatch()
	b.Set(append([]byte{'F'}, d[:]...), data)
	b.Delete(append([]byte{'f'}, d[:]...))
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	files := engine.NewMemoryFiles()
	s, err = engine.Open(kv, &engine.Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.File(ctx, d.String()); err != nil || string(got) != string(data) {
		t.Fatalf("the moved file: %q %v", got, err)
	}
	if _, err := kv.Get(append([]byte{'F'}, d[:]...)); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the old entry stays: %v", err)
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
}
