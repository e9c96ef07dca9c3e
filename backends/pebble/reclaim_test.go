package pebble

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// tableBytes is the size of a store's tables.
func tableBytes(t *testing.T, dir string) int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".sst") {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

// A bounded source floods a store with ~250 KB versions that wait for a
// first version that never comes, on a Pebble that compacts only when
// asked: the latest its own compactions could come. The versions dropped
// past the source's bound leave the disk once MaxDroppedBytes of them
// are dropped (Reclaim), so the tables hold at most the source's bound,
// MaxDroppedBytes and a rewrite's copy of what waits, not the 16 MB
// sent. Without Reclaim they stay in L0 until Pebble compacts (8.4 MiB
// bound, tables at 15 MiB). The bounds are a quarter of the defaults,
// the memtables 1 MiB: the same flood at a quarter of the bytes.
func TestDroppedWaitingLeaveTheDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	kv, err := Open(dir, &Options{MemTableSize: 1 << 20, noAutoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	lim := engine.WaitingLimits{MaxBytes: 8 << 20, MaxBytesPerSource: 2 << 20, MaxDroppedBytes: 4 << 20}
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}, Waiting: lim})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := enginetest.NewWriter(enginetest.SpaceID("flood"))
	if err != nil {
		t.Fatal(err)
	}
	const n, size = 64, 250_000
	var peak int64
	ctx := context.Background()
	for i := range n {
		a0, err := w.First("app.flood", canonical.NewObject("n", float64(i)))
		if err != nil {
			t.Fatal(err)
		}
		pad := make([]byte, size*3/4)
		rand.Read(pad) // nothing compresses it away
		v, err := w.Next(a0, canonical.NewObject("n", float64(i), "pad", base64.RawStdEncoding.EncodeToString(pad)))
		if err != nil {
			t.Fatal(err)
		}
		outs, err := s.Admit(ctx, "peer", []*record.Version{v})
		if err != nil {
			t.Fatal(err)
		}
		if outs[0].Verdict != engine.Later {
			t.Fatalf("version %d: %v, want later", i, outs[0].Verdict)
		}
		peak = max(peak, tableBytes(t, dir))
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.WaitingDropped < n-10 {
		t.Fatalf("%d dropped of %d past a bound of %d bytes", st.WaitingDropped, n, lim.MaxBytesPerSource)
	}
	bound := 2*lim.MaxBytesPerSource + lim.MaxDroppedBytes + 2*size
	t.Logf("%d × %d KB, %d dropped: tables at most %.1f MiB (bound %.1f MiB)", n, size/1000, st.WaitingDropped, float64(peak)/(1<<20), float64(bound)/(1<<20))
	if peak > bound {
		t.Errorf("the tables held %d bytes at their peak, past %d: what was dropped waits for a compaction", peak, bound)
	}
}
