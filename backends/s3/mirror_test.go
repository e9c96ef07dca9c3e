package s3

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/record"
)

func newEngine(t *testing.T) *engine.Store {
	t.Helper()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func exportSet(t *testing.T, s *engine.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for b, err := range s.ExportJSON(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		v, err := record.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		out[v.ID] = string(b)
	}
	return out
}

// Backup to S3 then restore into a fresh store gives the same held
// versions, through throttling, 500s, resets, cut bodies and pages of 7,
// in both checksum modes and without conditional writes; every segment
// read is checked against its own checksum (a cut body never decodes).
func TestBackupRestore(t *testing.T) {
	for _, c := range []struct {
		name, checksum string
		noCAS          bool
	}{{"when_supported", "when_supported", false}, {"when_required", "when_required", false}, {"no-cas", "", true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			f, ep := fakeS3(t)
			f.maxKeys = 7
			f.stripIfNoneMatch = c.noCAS
			b := openFake(t, ep, "backup", c.checksum, true)
			orig := newEngine(t)
			var vs []*record.Version
			err := enginetest.Corpus(enginetest.SpaceID("backup"), enginetest.CorpusOptions{Versions: 600, Seed: 7}, func(v *record.Version) error {
				vs = append(vs, v)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := orig.Admit(ctx, "local", vs); err != nil {
				t.Fatal(err)
			}
			f.failing.Store(true)
			bm, err := mirror.New(orig, b, &mirror.Options{BatchVersions: 40})
			if err != nil {
				t.Fatal(err)
			}
			defer bm.Close()
			res, err := bm.Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Segments) < 10 {
				t.Fatalf("backup wrote %d segments", len(res.Segments))
			}
			// Restore, interrupted half-way (cancelled at the first read
			// after 5 once a batch is committed: the admission pipeline
			// commits behind the reads, and under load it may not have
			// committed any by the fifth), then resumed by a new mirror on
			// the same store.
			fresh := newEngine(t)
			cctx, cancel := context.WithCancel(ctx)
			committed := func() bool {
				st, err := fresh.Stats(ctx)
				return err == nil && st.Versions > 0
			}
			rm, err := mirror.New(fresh, &cancelAfter{Blobs: b, n: 5, ready: committed, cancel: cancel}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rm.Import(cctx); err == nil {
				t.Fatal("the restore was not interrupted")
			}
			part := len(exportSet(t, fresh))
			if part == 0 {
				t.Fatal("nothing was restored before the interruption")
			}
			rm.Close()
			rm, err = mirror.New(fresh, b, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rm.Close()
			if _, err := rm.Import(ctx); err != nil {
				t.Fatal(err)
			}
			f.failing.Store(false)
			a, z := exportSet(t, orig), exportSet(t, fresh)
			if len(a) != len(z) || len(a) == 0 {
				t.Fatalf("restored %d of %d versions", len(z), len(a))
			}
			for id, x := range a {
				if z[id] != x {
					t.Fatalf("%s differs after restore", id)
				}
			}
			t.Logf("%d versions in %d segments; %d requests; %d SlowDown, %d 500, %d resets, %d cut bodies",
				len(a), len(res.Segments), f.Requests.Load(), f.SlowDowns.Load(), f.ServerErrors.Load(), f.Resets.Load(), f.BodyCuts.Load())
		})
	}
}

// cancelAfter cancels a context at the first read past n once ready
// reports true: a restore interrupted.
type cancelAfter struct {
	engine.Blobs
	n      int
	ready  func() bool
	cancel context.CancelFunc
}

func (c *cancelAfter) Get(ctx context.Context, name string) ([]byte, error) {
	if c.n--; c.n < 0 && (c.ready == nil || c.ready()) {
		c.cancel()
	}
	return c.Blobs.Get(ctx, name)
}

func (c *cancelAfter) StoreID() string { return c.Blobs.(engine.BlobStoreID).StoreID() }

// An import round with nothing new costs the same few requests however
// many segments the bucket holds: listing starts after what was read, per
// writer (S8).
func TestIdleRoundCost(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	f.maxKeys = 7
	b := openFake(t, ep, "cost", "", true)
	orig := newEngine(t)
	var vs []*record.Version
	err := enginetest.Corpus(enginetest.SpaceID("cost"), enginetest.CorpusOptions{Versions: 400, Seed: 3}, func(v *record.Version) error {
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := mirror.New(orig, b, &mirror.Options{BatchVersions: 10, CompactAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	reader, err := mirror.New(newEngine(t), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	idle := func() int64 {
		if _, err := reader.Import(ctx); err != nil { // catch up
			t.Fatal(err)
		}
		n := f.Requests.Load()
		if _, err := reader.Import(ctx); err != nil {
			t.Fatal(err)
		}
		return f.Requests.Load() - n
	}
	admitExport := func(part []*record.Version) {
		if _, err := orig.Admit(ctx, "local", part); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Export(ctx); err != nil {
			t.Fatal(err)
		}
	}
	admitExport(vs[:100]) // 10 segments
	few := idle()
	admitExport(vs[100:]) // 40 segments
	many := idle()
	if few != many || few > 6 {
		t.Fatalf("an idle round cost %d requests with 10 segments and %d with 40", few, many)
	}
	t.Logf("an idle round: %d requests", few)
}

// A 409 ConditionalRequestConflict is retried; a PUT whose answer was lost
// is retried, meets 412 for its own earlier success, and the mirror finds
// its own bytes there (S3).
func TestConflictAndLostReply(t *testing.T) {
	for _, mode := range []string{"409", "lost reply"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			f, ep := fakeS3(t)
			b := openFake(t, ep, "c", "", true)
			f.conflictOnce = mode == "409"
			f.lostReply = mode == "lost reply"
			orig := newEngine(t)
			var vs []*record.Version
			if err := enginetest.Corpus(enginetest.SpaceID("conflict"), enginetest.CorpusOptions{Versions: 60, Seed: 5}, func(v *record.Version) error {
				vs = append(vs, v)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := orig.Admit(ctx, "local", vs); err != nil {
				t.Fatal(err)
			}
			m, err := mirror.New(orig, b, &mirror.Options{BatchVersions: 20})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			res, err := m.Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Segments) != 3 || m.Stats().Clones != 0 {
				t.Fatalf("export: %+v, clones %d", res, m.Stats().Clones)
			}
			fresh := newEngine(t)
			r, err := mirror.New(fresh, b, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Import(ctx); err != nil {
				t.Fatal(err)
			}
			if a, z := exportSet(t, orig), exportSet(t, fresh); len(a) != len(z) {
				t.Fatalf("restored %d of %d", len(z), len(a))
			}
		})
	}
}

// Case 7 (issue 12) on S3: a store that backed up to a prefix remembers
// the blob store it found there. The prefix emptied and set up again (a
// new marker), or another store put there, is refused naming both ids;
// adopted, it takes everything again. Another prefix is set up without
// ceremony.
func TestPrefixReplacedRefused(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	b := openFake(t, ep, "p", "", true)
	was := b.StoreID()
	orig := newEngine(t)
	var vs []*record.Version
	if err := enginetest.Corpus(enginetest.SpaceID("replaced s3"), enginetest.CorpusOptions{Versions: 30, Seed: 6}, func(v *record.Version) error {
		vs = append(vs, v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := orig.Admit(ctx, "local", vs); err != nil {
		t.Fatal(err)
	}
	m, err := mirror.New(orig, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Export(ctx); err != nil {
		t.Fatal(err)
	}
	m.Close()

	// Emptied (every object deleted), then set up again.
	for _, k := range rawKeys(t, b, "p/") {
		if _, err := b.c.DeleteObject(ctx, deleteInput("bkt", k)); err != nil {
			t.Fatal(err)
		}
	}
	b2 := openFake(t, ep, "p", "", true)
	if b2.StoreID() == was {
		t.Fatal("the same id twice")
	}
	f.resetMethods()
	r, err := mirror.New(orig, b2, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Export(ctx)
	r.Close()
	var ce *mirror.StoreChangedError
	if !errors.As(err, &ce) || !ce.Empty || ce.Remembered != was || ce.Found != b2.StoreID() || ce.Location != b.Locate() {
		t.Fatalf("export to an emptied prefix set up again: %v (%+v)", err, ce)
	}
	if !strings.Contains(err.Error(), was) || !strings.Contains(err.Error(), b2.StoreID()) {
		t.Fatalf("the message names both ids: %v", err)
	}
	if n := f.writes(); n != 0 {
		t.Fatalf("a refused export made %d requests that write", n)
	}

	// Adopted: everything is exported there again, and read back whole.
	ad, err := mirror.New(orig, b2, &mirror.Options{Adopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ad.Export(ctx); err != nil || res.Versions != len(vs) {
		t.Fatalf("adopting exported %+v: %v", res, err)
	}
	ad.Close()
	fresh := newEngine(t)
	rm, err := mirror.New(fresh, b2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rm.Import(ctx); err != nil {
		t.Fatal(err)
	}
	rm.Close()
	if a, z := exportSet(t, orig), exportSet(t, fresh); len(a) != len(z) {
		t.Fatalf("after adopting: restored %d of %d", len(z), len(a))
	}

	// Another store put in its place, holding segments: refused, not empty.
	for _, k := range rawKeys(t, b, "p/") {
		if _, err := b.c.DeleteObject(ctx, deleteInput("bkt", k)); err != nil {
			t.Fatal(err)
		}
	}
	b3 := openFake(t, ep, "p", "", true)
	om, err := mirror.New(fresh, b3, &mirror.Options{Adopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := om.Export(ctx); err != nil {
		t.Fatal(err)
	}
	om.Close()
	r, err = mirror.New(orig, b3, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Import(ctx); !errors.As(err, &ce) || ce.Empty || ce.Remembered != b2.StoreID() || ce.Found != b3.StoreID() {
		t.Fatalf("import from another store in its place: %v", err)
	}

	// A prefix this store never mirrored to: no ceremony.
	other, err := mirror.New(orig, openFake(t, ep, "q", "", true), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Export(ctx); err != nil {
		t.Fatalf("a new prefix: %v", err)
	}
}
