package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// The cache of recently stored versions is bounded in bytes as well as in
// number: versions naming 64 files each (some 5 KB stored, six times that
// decoded) fill it to its bytes, not to its 8,192 versions, however many
// are stored; and the version stored last is still there for the next
// edit's chain check.
func TestHeldCacheBoundedInBytes(t *testing.T) {
	ctx := context.Background()
	const bound = 256 << 10
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}, Files: engine.NewMemoryFiles(), CacheBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := enginetest.NewWriter(enginetest.SpaceID("held cache"))
	if err != nil {
		t.Fatal(err)
	}
	largest, stored := 0, 0
	var last *record.Version
	for round, n := range []int{50, 400} {
		for i := range n {
			v, size := admitNamingFiles(t, ctx, s, w, fmt.Sprintf("round %d version %d", round, i), i)
			largest = max(largest, size)
			stored++
			last = v
		}
		held, bytes := engine.HeldCache(s)
		// Each version weighs its envelope and body as stored, a little
		// less than its JSON; the one put last may alone pass half.
		if bytes > bound+int64(largest) || held >= stored {
			t.Fatalf("after %d versions of up to %d bytes: %d held, %d bytes (bound %d)", stored, largest, held, bytes, bound)
		}
		if held < bound/(2*largest) {
			t.Fatalf("after %d versions of up to %d bytes: only %d held, %d bytes (bound %d)", stored, largest, held, bytes, bound)
		}
	}
	d := enginetest.Digest(last)
	if !engine.IsHeldCached(s, d) {
		t.Errorf("the version stored last is not in the cache")
	}
}

// admitNamingFiles admits into s a version by w naming 64 files, their
// hashes made from tag (some 5 KB stored, 18 KB decoded: what weighs most
// in a bound counted in bytes), and returns it and its size as JSON.
func admitNamingFiles(t *testing.T, ctx context.Context, s *engine.Store, w *enginetest.Writer, tag string, n int) (*record.Version, int) {
	t.Helper()
	refs := make([]record.File, 64)
	for j := range refs {
		data := fmt.Appendf(nil, "%s file %d", tag, j)
		refs[j] = record.File{Hash: canonical.IDOf(data), Size: int64(len(data))}
	}
	v, err := w.First("app.files", canonical.NewObject("n", float64(n)), func(d *record.Draft) { d.Files = refs })
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(ctx, "p", []*record.Version{v}); err != nil {
		t.Fatal(err)
	}
	return v, len(b)
}
