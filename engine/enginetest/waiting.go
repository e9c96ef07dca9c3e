package enginetest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/record"
)

// clock is a settable clock for the waiting versions' age.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// unstandable signs n edits of size bytes each whose prev and first
// version never arrive: they wait forever (02 §9.5).
func unstandable(t *testing.T, space string, n, size int) []*record.Version {
	t.Helper()
	w := writer(t, space)
	pad := strings.Repeat("x", size)
	var out []*record.Version
	for i := range n {
		a0 := must[*record.Version](t)(w.First("app.flood", canonical.NewObject("n", float64(i))))
		out = append(out, must[*record.Version](t)(w.Next(a0, canonical.NewObject("n", float64(i), "pad", pad))))
	}
	return out
}

// genuine is a chain a0 ← a1 ← a2 of which a1 and a2 arrive first and
// wait for a0, which arrives last.
type genuine struct{ a0, a1, a2 *record.Version }

func newGenuine(t *testing.T, space string) genuine {
	w := writer(t, space)
	a0 := must[*record.Version](t)(w.First("app.note", "zero"))
	a1 := must[*record.Version](t)(w.Next(a0, "one"))
	a2 := must[*record.Version](t)(w.Next(a1, "two"))
	return genuine{a0, a1, a2}
}

// stands admits a0 from its source and requires the chain to stand.
func (g genuine) stands(t *testing.T, s *engine.Store, from string) {
	t.Helper()
	want(t, admit(t, s, from, g.a0)[0], engine.Stands, engine.Stub)
	for _, v := range []*record.Version{g.a1, g.a2} {
		if storedAs(t, s, v) == engine.None {
			t.Fatalf("the genuine waiting version %s was dropped", v.ID)
		}
	}
}

func waitingBytes(t *testing.T, s *engine.Store) engine.Stats {
	t.Helper()
	return must[engine.Stats](t)(s.Stats(ctx))
}

// The waiting bounds in bytes (engine.WaitingLimits): a source flooding
// the store with versions that can never stand loses its own oldest, never
// another source's; the store-wide bound takes from the source holding the
// most; a version larger than a bound is not held; an unbounded source's
// versions are never dropped for a peer's. Stats count what waits and what
// was let go.
func (h *harness) testWaitingBytes(t *testing.T) {
	sp := SpaceID("waiting bytes")
	const perSource, total = 64 << 10, 160 << 10
	lim := engine.WaitingLimits{MaxBytesPerSource: perSource, MaxBytes: total,
		Unbounded: func(from string) bool { return strings.HasPrefix(from, "own:") }}
	s := h.store(t, &engine.Options{Waiting: lim})
	honest := newGenuine(t, sp)
	for _, o := range admit(t, s, "honest", honest.a2, honest.a1) {
		want(t, o, engine.Later, engine.None)
	}
	own := newGenuine(t, sp)
	admit(t, s, "own:import", own.a2, own.a1)
	// One flood of 300 versions of ~4 KiB from one source, in batches.
	flood := unstandable(t, sp, 300, 4<<10)
	for i := 0; i < len(flood); i += 25 {
		for _, o := range admit(t, s, "flood", flood[i:i+25]...) {
			want(t, o, engine.Later, engine.None)
		}
		if st := waitingBytes(t, s); st.WaitingBytes > perSource+total {
			t.Fatalf("after %d flooded: %d bytes waiting", i+25, st.WaitingBytes)
		}
	}
	srcs := must[[]engine.WaitingSource](t)(s.WaitingSources(0))
	bySource := map[string]engine.WaitingSource{}
	for _, x := range srcs {
		bySource[x.From] = x
	}
	if f := bySource["flood"]; f.Bytes > perSource || f.Bytes < perSource/2 || !f.Bounded {
		t.Fatalf("the flood holds %+v, bound %d", f, perSource)
	}
	if o := bySource["own:import"]; o.Versions != 2 || o.Bounded {
		t.Fatalf("the unbounded source holds %+v", o)
	}
	if srcs[0].From != "flood" {
		t.Fatalf("sources not largest first: %+v", srcs)
	}
	// The newest of the flood are the ones kept.
	if storedAs(t, s, flood[len(flood)-1]) != engine.None {
		t.Fatal("a flooded version is held")
	}
	var kept []string
	if err := s.Waiting(func(v *record.Version, _ []string) bool { kept = append(kept, v.ID); return true }); err != nil {
		t.Fatal(err)
	}
	if !containsID(kept, flood[len(flood)-1].ID) || containsID(kept, flood[0].ID) {
		t.Fatal("the flood's oldest were kept over its newest")
	}
	// More sources flooding: the store-wide bound takes from the largest.
	for i := range 4 {
		from := "flood" + string(rune('a'+i))
		vs := unstandable(t, sp, 40, 4<<10)
		admit(t, s, from, vs...)
		st := waitingBytes(t, s)
		own := bySource["own:import"].Bytes
		if st.WaitingBytes-own > total {
			t.Fatalf("after %s: %d bytes waiting from bounded sources, bound %d", from, st.WaitingBytes-own, total)
		}
	}
	// Larger than a bound alone: not held.
	big := unstandable(t, sp, 1, perSource)
	want(t, admit(t, s, "big", big...)[0], engine.Later, engine.None)
	for _, x := range must[[]engine.WaitingSource](t)(s.WaitingSources(0)) {
		if x.From == "big" {
			t.Fatalf("a version over the bound is held: %+v", x)
		}
	}
	st := waitingBytes(t, s)
	if st.WaitingDropped < 300-perSource/(4<<10) {
		t.Fatalf("dropped %d", st.WaitingDropped)
	}
	honest.stands(t, s, "honest")
	own.stands(t, s, "own:import")
	clean(t, s)
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// A bounded source's waiting versions are dropped WaitingLimits.MaxAge
// after they arrived, by the next admission; an unbounded source's are
// not; newer ones wait on.
func (h *harness) testWaitingExpires(t *testing.T) {
	sp := SpaceID("waiting age")
	c := newClock()
	s := h.store(t, &engine.Options{Now: c.Now, Waiting: engine.WaitingLimits{MaxAge: time.Hour,
		Unbounded: func(from string) bool { return from == "own" }}})
	old := unstandable(t, sp, 10, 100)
	admit(t, s, "peer", old...)
	own := newGenuine(t, sp)
	admit(t, s, "own", own.a2, own.a1)
	c.add(50 * time.Minute)
	fresh := newGenuine(t, sp)
	admit(t, s, "peer", fresh.a2, fresh.a1)
	c.add(15 * time.Minute)
	admit(t, s, "other", unstandable(t, sp, 1, 10)...)
	st := waitingBytes(t, s)
	if st.WaitingExpired != 10 || st.Waiting != 5 {
		t.Fatalf("after an hour: %+v", st)
	}
	for _, v := range old {
		if storedAs(t, s, v) != engine.None {
			t.Fatal("an expired version is held")
		}
	}
	fresh.stands(t, s, "peer")
	own.stands(t, s, "own")
	clean(t, s)
}

// Across a restart: the waiting bounds hold on what a store opened with
// lower bounds holds, expired versions are dropped when it opens, and the
// flood's bytes leave the disk (02 §9.5 versions that can never stand do
// not fill it).
func testWaitingReopen(t *testing.T, openPath func(string) (engine.KV, error)) {
	dir := filepath.Join(t.TempDir(), "store")
	sp := SpaceID("waiting reopen")
	c := newClock()
	open := func(lim engine.WaitingLimits) *engine.Store {
		t.Helper()
		kv, err := openPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := engine.Open(kv, &engine.Options{Judge: Judge{}, Now: c.Now, Waiting: lim})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// 48 MiB of versions that can never stand, from one source, twelve
	// times the bound on what it may keep waiting; under -race, where
	// each byte signed and stored costs several times more, 12 MiB and a
	// bound of 1 MiB, the same twelve times.
	perSource, n := int64(4<<20), int64(192)
	if race.Enabled {
		perSource, n = 1<<20, 48
	}
	s := open(engine.WaitingLimits{MaxBytesPerSource: perSource, MaxBytes: 2 * perSource, MaxAge: time.Hour})
	base := dirSize(t, dir)
	honest := newGenuine(t, sp)
	admit(t, s, "honest", honest.a2, honest.a1)
	const size = 256 << 10
	w := writer(t, sp)
	pad := strings.Repeat("y", size)
	var peak int64
	for i := int64(0); i < n; i += 8 {
		var vs []*record.Version
		for j := i; j < i+8; j++ {
			a0 := must[*record.Version](t)(w.First("app.flood", canonical.NewObject("n", float64(j))))
			vs = append(vs, must[*record.Version](t)(w.Next(a0, canonical.NewObject("n", float64(j), "pad", pad))))
		}
		admit(t, s, "flood", vs...)
		peak = max(peak, dirSize(t, dir)-base)
	}
	if st := waitingBytes(t, s); st.WaitingBytes > perSource+4<<10 {
		t.Fatalf("%d bytes waiting, bound %d", st.WaitingBytes, perSource)
	}
	s.Close()
	// Lower bounds at the next open apply at once.
	s = open(engine.WaitingLimits{MaxBytesPerSource: perSource / 4, MaxBytes: perSource, MaxAge: time.Hour})
	if st := waitingBytes(t, s); st.WaitingBytes > perSource/4+4<<10 || st.WaitingDropped < n-perSource/size {
		t.Fatalf("reopened with lower bounds: %+v", st)
	}
	clean(t, s)
	s.Close()
	after := dirSize(t, dir) - base
	t.Logf("%d MiB flooded: the store grew by at most %.1f MiB, %.1f MiB after a restart", n*size>>20, float64(peak)/(1<<20), float64(after)/(1<<20))
	if after > 4*int64(perSource) {
		t.Errorf("after a restart the store is %.1f MiB larger than before %d MiB of versions that never stand", float64(after)/(1<<20), n*size>>20)
	}
	// Past MaxAge, opening drops them.
	c.add(2 * time.Hour)
	s = open(engine.WaitingLimits{MaxAge: time.Hour})
	if st := waitingBytes(t, s); st.Waiting != 0 || st.WaitingExpired == 0 {
		t.Fatalf("reopened past the age: %+v", st)
	}
	clean(t, s)
	s.Close()
}

// dirSize is the bytes of the files under dir (a store's directory, or
// the directory of a store's file).
func dirSize(t *testing.T, path string) int64 {
	t.Helper()
	root := path
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		root = filepath.Dir(path)
	}
	var n int64
	filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
