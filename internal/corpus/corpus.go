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

// Opt changes a draft before it is signed.
type Opt func(d *record.Draft)

// Retain sets retain: true.
func Retain(d *record.Draft) { d.Retain = true }

// SignDraft sets d's space, createdAt and place in the writer's line of
// its collection, and signs it.
func (w *Writer) SignDraft(d *record.Draft) (*record.Version, error) {
	w.place(d)
	return w.took(d.Sign(w.Key))
}

// Sign is [Writer.SignDraft] for a version no Draft makes — one that
// breaks a rule of 02 §4.7 on purpose: o's members replace the draft's
// (key, seq, prev, genesis, body).
func (w *Writer) Sign(o *canonical.Object, collection string) (*record.Version, error) {
	d := &record.Draft{Collection: collection}
	w.place(d)
	u := d.Object()
	for _, m := range o.Members {
		u.Set(m.Name, m.Value)
	}
	return w.took(record.Sign(u, w.Key))
}

// place sets d's space, createdAt (the writer's clock, 7 ms a version) and
// the next place in the writer's line of its collection (02 §4.10).
func (w *Writer) place(d *record.Draft) {
	w.clock = w.clock.Add(time.Millisecond * 7)
	d.Space, d.CreatedAt, d.Log = w.Space, w.clock, record.LogAfter(nil)
	if l := w.lines[d.Collection]; len(l) > 0 {
		d.Log = record.Log{N: int64(len(l)), Prev: l[len(l)-1]}
	}
}

// took keeps a signed version's place in its writer's line.
func (w *Writer) took(v *record.Version, err error) (*record.Version, error) {
	if err != nil {
		return nil, err
	}
	w.lines[v.Collection] = append(w.lines[v.Collection], v.ID)
	return v, nil
}

// First signs a record's first version at a fresh key of the writer's.
func (w *Writer) First(collection string, body any, opts ...Opt) (*record.Version, error) {
	key, err := record.FreshKey(w.Key.DID())
	if err != nil {
		return nil, err
	}
	d := &record.Draft{Collection: collection, Key: key, Body: body}
	for _, f := range opts {
		f(d)
	}
	return w.SignDraft(d)
}

// Next signs the version after prev with a new body.
func (w *Writer) Next(prev *record.Version, body any, opts ...Opt) (*record.Version, error) {
	d := &record.Draft{Collection: prev.Collection, Key: prev.Key, After: prev, Body: body}
	for _, f := range opts {
		f(d)
	}
	return w.SignDraft(d)
}

// Delete signs a delete after prev (02 §4.4).
func (w *Writer) Delete(prev *record.Version) (*record.Version, error) {
	return w.SignDraft(&record.Draft{Collection: prev.Collection, Key: prev.Key, After: prev, Deleted: true})
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
