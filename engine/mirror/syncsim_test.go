package mirror_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/folder/foldertest"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
	"github.com/minca-go/minca/internal/longtest"
	"github.com/minca-go/minca/internal/race"
)

// Issue 12, cases 1, 8, 9 and 10 together: two devices, each with its own
// copy of one folder, a simulated sync service between them (foldertest)
// with every fault it has, seeded. Both devices set the folder up at once.
// Throughout, a bad segment a device reports is one the service damaged
// or left partial, and every damaged one present is reported; a device's
// folder is gone only while the service has it away. Once the service
// settles: both stores hold the same versions, every version written is
// there, both mirrors work under one store id, no writer changed or wrote
// a version twice, and each folder holds no duplicate, no copy of a
// segment, and at most CompactAt segments per writer. Eight seeds; two
// under -short or -race.
func TestSyncSimulation(t *testing.T) {
	seeds, steps := 8, 400
	if testing.Short() || race.Enabled {
		seeds = 2
	}
	if longtest.Enabled() {
		seeds, steps = 40, 1500
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { simulate(t, uint64(seed), steps) })
	}
}

type simDevice struct {
	*device
	b       *folder.Store
	writer  string
	created map[string]bool // ids of versions written here
	keys    []string
}

// localIDs is what a store took in from its own writes: changes whose
// source is "local".
func localIDs(t testing.TB, s *engine.Store) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for c, err := range s.Changes(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if c.From == "local" && c.Kind == engine.Stored {
			out[c.ID.String()] = true
		}
	}
	return out
}

func simulate(t *testing.T, seed uint64, steps int) {
	sim := foldertest.New(foldertest.Options{
		Seed: seed,
		Devices: []foldertest.Device{
			{Name: "one", Root: "/home/one/Dropbox/minca", Style: foldertest.Dropbox},
			{Name: "two", Root: "/home/two/iCloud/minca", Style: foldertest.ICloud},
		},
		Partial: 0.1, Placeholder: 0.1, Corrupt: 0.08, Duplicate: 0.1,
		LateDelete: 0.2, Resurrect: 0.1, Away: 0.02,
	})
	rng := rand.New(rand.NewPCG(seed, 99))
	space := enginetest.SpaceID(fmt.Sprint("simulation ", seed))
	const compactAt = 4
	devs := make([]*simDevice, 2)
	for i := range devs {
		b, err := folder.Open([]string{"/home/one/Dropbox/minca", "/home/two/iCloud/minca"}[i],
			&folder.Options{FS: sim.FS, Create: true, Rand: seeded(seed, uint64(i))})
		if err != nil {
			t.Fatal(err)
		}
		d := newDevice(t, space, b, seed*10+uint64(i), &mirror.Options{
			CompactAt: compactAt, BatchVersions: 4, Reread: time.Microsecond, Salvage: i == 1,
			Rand: seeded(seed, uint64(100+i))})
		w, err := d.m.Writer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		devs[i] = &simDevice{device: d, b: b, writer: w}
	}
	var gone, shrunk, badReports int
	round := func(i int, faults bool) {
		d := devs[i]
		// What the service damaged that the round must name: segments of
		// the other writer delivered damaged and not repaired.
		damaged, expect := sim.Damaged(i), map[string]bool{}
		for n := range sim.Corrupted(i) {
			if seg, ok := segment.ParseName(n); ok && seg.Writer != d.writer {
				expect[n] = true
			}
		}
		err := d.m.Round(ctx)
		var be *mirror.BadSegmentsError
		switch {
		case err == nil:
			if len(expect) > 0 {
				t.Fatalf("device %d read past %v, which the service damaged", i, expect)
			}
		case errors.As(err, &be):
			badReports++
			named := map[string]bool{}
			for _, p := range be.Segments {
				named[p.Name] = true
				if !damaged[p.Name] {
					t.Fatalf("device %d called %s bad (%s); the service holds it whole", i, p.Name, p.Reason)
				}
			}
			for n := range expect {
				if !named[n] {
					t.Fatalf("device %d did not name %s, which the service damaged", i, n)
				}
			}
		case !faults:
			t.Fatalf("device %d once the service settled: %v", i, err)
		case errors.Is(err, engine.ErrBlobStoreGone):
			if !sim.Away(i) {
				t.Fatalf("device %d: the folder is gone though the service has it here: %v", i, err)
			}
			gone++
		case errors.Is(err, mirror.ErrBlobStoreShrunk):
			shrunk++ // deletes delivered before what replaces them (F5)
		default:
			t.Fatalf("device %d: %v", i, err)
		}
	}
	for step := 0; step < steps; step++ {
		i := rng.IntN(2)
		d := devs[i]
		switch r := rng.IntN(10); {
		case r < 4:
			sim.Step()
		case r < 7:
			for n := 1 + rng.IntN(3); n > 0; n-- {
				if len(d.keys) == 0 || rng.IntN(3) == 0 {
					d.keys = append(d.keys, d.create(step*10+n))
				} else {
					d.edit(space, d.keys[rng.IntN(len(d.keys))], step)
				}
			}
		default:
			round(i, true)
		}
	}
	// The service settles: rounds until nothing moves.
	for pass := 0; ; pass++ {
		if pass > 20 {
			t.Fatal("the devices do not settle")
		}
		sim.Settle()
		before := sim.Files(0)
		for i := range devs {
			round(i, false)
		}
		sim.Settle()
		for i := range devs {
			round(i, false)
		}
		if sim.Quiet() && sameFiles(before, sim.Files(0)) && sameFiles(sim.Files(0), sim.Files(1)) {
			break
		}
	}
	sameHeld(t, devs[0].s, devs[1].s, "after the service settled")
	held := heldSet(t, devs[0].s)
	for i, d := range devs {
		d.created = localIDs(t, d.s)
		for id := range d.created {
			if _, ok := held[id]; !ok {
				t.Fatalf("version %s written on device %d is lost", id, i)
			}
		}
		st := d.m.Stats()
		if w, _ := d.m.Writer(ctx); w != d.writer || st.Clones != 0 {
			t.Fatalf("device %d changed writers: %s → %s (%+v)", i, d.writer, w, st)
		}
		if st.Exported != int64(len(d.created)) {
			t.Fatalf("device %d exported %d versions; it wrote %d", i, st.Exported, len(d.created))
		}
	}
	if a, b := devs[0].m.StoreID(), devs[1].m.StoreID(); a != b || a != devs[0].b.StoreID() || b != devs[1].b.StoreID() {
		t.Fatalf("store ids: mirrors %s and %s, folders %s and %s", a, b, devs[0].b.StoreID(), devs[1].b.StoreID())
	}
	for i := range devs {
		checkFolder(t, i, sim.Files(i), compactAt, devs[0].writer, devs[1].writer)
	}
	ss := sim.Stats()
	t.Logf("seed %d: %d versions; service %+v; %d bad-segment reports, %d rounds with the folder gone, %d shrunk; duplicates removed %d and %d",
		seed, len(held), ss, badReports, gone, shrunk, devs[0].m.Stats().Duplicates, devs[1].m.Stats().Duplicates)
}

// seeded is a reproducible stream of random bytes (store and writer ids).
func seeded(seed, n uint64) *rand.ChaCha8 {
	var k [32]byte
	binary.BigEndian.PutUint64(k[:], seed)
	binary.BigEndian.PutUint64(k[8:], n)
	return rand.NewChaCha8(k)
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(b[k], v) {
			return false
		}
	}
	return true
}

// checkFolder: no two files alike, no copy of a segment, and each writer
// within its compaction bound; the only other files are the marker and
// copies of it with another id.
func checkFolder(t *testing.T, i int, files map[string][]byte, compactAt int, writers ...string) {
	t.Helper()
	seen := map[[32]byte]string{}
	per := map[string]int{}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		if other, dup := seen[sum]; dup {
			t.Fatalf("device %d: %s and %s are the same bytes (a duplicate left)", i, other, n)
		}
		seen[sum] = n
		if seg, ok := segment.ParseName(n); ok {
			per[seg.Writer]++
			continue
		}
		if n == folder.MarkerName || strings.HasPrefix(n, "minca-store") && strings.HasSuffix(n, ".json") {
			continue
		}
		t.Fatalf("device %d: %s left in the folder (%d files: %v)", i, n, len(files), names)
	}
	for w, n := range per {
		if n > compactAt {
			t.Fatalf("device %d: writer %s has %d segments, over %d", i, w, n, compactAt)
		}
	}
	if len(per) > len(writers) {
		t.Fatalf("device %d: segments of %d writers, want at most %d: %v", i, len(per), len(writers), per)
	}
}
