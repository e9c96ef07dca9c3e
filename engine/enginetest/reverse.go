package enginetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/minca-go/minca/engine"
)

// A KV that iterates backwards (engine.ReverseReader) yields exactly what
// NewIter yields, in the other order, for any bounds.
func (h *harness) testReverse(t *testing.T) {
	kv := h.open(t)
	defer kv.Close()
	rr, ok := kv.(engine.ReverseReader)
	if !ok {
		t.Skip("this KV does not iterate backwards")
	}
	b, err := kv.NewBatch()
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("r%03d", i)) }
	for i := 0; i < 300; i += 3 {
		b.Set(key(i), []byte(fmt.Sprint(i)))
	}
	b.Set([]byte("r"), []byte("prefix"))
	b.Set([]byte("r\xff"), []byte("high"))
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	read := func(it engine.Iterator, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for it.Next() {
			out = append(out, string(it.Key())+"="+string(it.Value()))
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		return out
	}
	r := rand.New(rand.NewPCG(5, 6))
	bound := func() []byte {
		switch r.IntN(6) {
		case 0:
			return nil
		case 1:
			return []byte("r")
		}
		return key(r.IntN(310))
	}
	for range 200 {
		lo, hi := bound(), bound()
		if lo != nil && hi != nil && bytes.Compare(lo, hi) > 0 {
			lo, hi = hi, lo
		}
		fwd := read(kv.NewIter(lo, hi))
		back := read(rr.NewReverseIter(lo, hi))
		slices.Reverse(fwd)
		if !slices.Equal(fwd, back) {
			t.Fatalf("[%q, %q): backwards %q, forwards reversed %q", lo, hi, back, fwd)
		}
	}
}
