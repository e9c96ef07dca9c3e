package engine_test

import (
	"errors"
	"testing"

	"github.com/minca-go/minca/backends/memory"
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
