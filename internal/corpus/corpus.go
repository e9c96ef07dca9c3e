// Package corpus signs corpora of versions — records by several writers,
// edited and deleted, in their writers' lines (02 §4.10) — for the engine's
// conformance suite, the tests and the benchmarks `minca bench` runs. It is
// machinery, not protocol: keys are made fresh each time, shapes follow a
// seed.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// Writer signs versions of one key in one space, keeping its places in its
// lines (02 §4.10). It is used from one goroutine.
type Writer struct {
	Key   *identity.PrivateKey
	Space string
	clock time.Time
	lines map[string][]string // by collection: the ids at each place
}

// SpaceID returns a space id made from a name.
func SpaceID(name string) string { return canonical.IDOf([]byte("enginetest space " + name)).String() }

// NewWriter makes a writer with a new key.
func NewWriter(space string) (*Writer, error) {
	k, err := identity.GenerateKey()
	if err != nil {
		return nil, err
	}
	return &Writer{Key: k, Space: space, clock: time.Date(2026, 9, 26, 12, 0, 0, 0, time.UTC), lines: map[string][]string{}}, nil
}

// Opt changes an unsigned version before it is signed.
type Opt func(o *canonical.Object)

// Retain sets retain: true.
func Retain(o *canonical.Object) { o.Set("retain", true) }

// Sign sets o's collection, space, createdAt (the writer's clock, 7 ms a
// version) and log place, and signs it.
func (w *Writer) Sign(o *canonical.Object, collection string) (*record.Version, error) {
	w.clock = w.clock.Add(time.Millisecond * 7)
	o.Set("collection", collection)
	o.Set("space", w.Space)
	o.Set("createdAt", record.FormatTime(w.clock))
	l := w.lines[collection]
	log := canonical.NewObject("n", float64(0))
	if len(l) > 0 {
		log = canonical.NewObject("n", float64(len(l)), "prev", l[len(l)-1])
	}
	o.Set("log", log)
	v, err := record.Sign(o, w.Key)
	if err != nil {
		return nil, err
	}
	w.lines[collection] = append(l, v.ID)
	return v, nil
}

// First signs a record's first version at a fresh key of the writer's.
func (w *Writer) First(collection string, body any, opts ...Opt) (*record.Version, error) {
	key, err := record.FreshKey(w.Key.DID())
	if err != nil {
		return nil, err
	}
	o := canonical.NewObject("key", key, "seq", float64(0), "body", body)
	for _, f := range opts {
		f(o)
	}
	return w.Sign(o, collection)
}

// Next signs the version after prev with a new body.
func (w *Writer) Next(prev *record.Version, body any, opts ...Opt) (*record.Version, error) {
	o := canonical.NewObject("body", body)
	record.NextAfter(prev).Apply(o)
	for _, f := range opts {
		f(o)
	}
	return w.Sign(o, prev.Collection)
}

// Delete signs a delete after prev (02 §4.4).
func (w *Writer) Delete(prev *record.Version) (*record.Version, error) {
	o := canonical.NewObject("deleted", true, "body", nil)
	record.NextAfter(prev).Apply(o)
	return w.Sign(o, prev.Collection)
}

// Fork signs another version at the place in collection's line that the
// writer's last version there took: a fork (02 §4.10).
func (w *Writer) Fork(collection string) {
	if l := w.lines[collection]; len(l) > 0 {
		w.lines[collection] = l[:len(l)-1]
	}
}

// Body makes a small body for edit i of a record.
func Body(r *rand.Rand, i int) any {
	return canonical.NewObject("text", fmt.Sprintf("edit %d %x", i, r.Uint64()), "done", i%2 == 0)
}

// Options shapes [Generate].
type Options struct {
	Versions int     // about how many versions (default 1,000)
	Writers  int     // keys writing (default 4)
	Edits    float64 // average versions per record (default 3)
	Seed     uint64
}

// Generate signs a space's versions: records by several writers, each
// edited a random number of times (Edits on average), some ending in a
// delete. It calls emit with each version in writing order.
func Generate(space string, o Options, emit func(*record.Version) error) error {
	if o.Versions <= 0 {
		o.Versions = 1000
	}
	if o.Writers <= 0 {
		o.Writers = 4
	}
	if o.Edits <= 0 {
		o.Edits = 3
	}
	r := rand.New(rand.NewPCG(o.Seed, o.Seed+1))
	ws := make([]*Writer, o.Writers)
	for i := range ws {
		w, err := NewWriter(space)
		if err != nil {
			return err
		}
		ws[i] = w
	}
	for n := 0; n < o.Versions; {
		w := ws[r.IntN(len(ws))]
		edits := 1 + r.IntN(int(2*o.Edits-1))
		v, err := w.First("app.todo.item", Body(r, 0))
		if err != nil {
			return err
		}
		if err := emit(v); err != nil {
			return err
		}
		n++
		for i := 1; i < edits && n < o.Versions; i++ {
			if i == edits-1 && r.IntN(8) == 0 {
				v, err = w.Delete(v)
			} else {
				v, err = w.Next(v, Body(r, i))
			}
			if err != nil {
				return err
			}
			if err := emit(v); err != nil {
				return err
			}
			n++
		}
	}
	return nil
}
