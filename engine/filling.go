package engine

import (
	"hash/maphash"

	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// A node's first sync of a space fills a space the store held nothing of:
// every version it is sent is new, and admitting each looks up keys that
// are not there — its id, its record's head, its place in its writer's
// line — one look-up each, some 1.5 µs on Pebble (a miss goes through
// every level and its filter). A Filling lets such a source skip them:
// while its batches are the only ones decided in the store since it found
// the space empty, a key of the space is in the store only if one of its
// own batches wrote it, and it remembers which it wrote.
//
// The knowledge is the store's, kept under Store.mu, for one source at a
// time: any other batch decided in the store (another source's, a
// SetStanding, a re-judging, a sweep of what waits) ends it, whatever
// space that batch wrote, and the source's next batch reads as any other
// batch does. It starts again only while the space is still not
// registered ('S' is written in the batch that stores the space's first
// version, 02 §3.1), so a source that wrote into the space, or saw
// another do so, reads from then on.

// Filling names a source that fills one space: give it to each of the
// source's batches ([Prepared.Fill], [Stages].Fill), in the order they
// are submitted. It holds nothing itself; the store keeps what it knows
// (fillState), and at most one Filling's at a time.
type Filling struct {
	space string
}

// NewFilling is a Filling for a source whose versions are all of space
// (a sync session's). Versions of another space in its batches are read
// for as any others are.
func NewFilling(space string) *Filling { return &Filling{space: space} }

// Fill marks the batch as one of f's (nil: none).
func (p *Prepared) Fill(f *Filling) { p.fill = f }

// fillBits is the size of a fillState's filter of written keys: 2 MiB.
// A sync of 100,000 versions writes some 233,000 of the keys it tells
// (an id, a line place each, a head a record): one absent key in 100,000
// is then read for nothing; at a million versions, one in 30; at ten
// million, two in three.
const (
	fillBits   = 1 << 24
	fillHashes = 4
)

// fillState is what the store knows of the space its Filling fills: the
// keys of the kinds it tells absent (ids, heads, line places) that the
// source's batches wrote, in a Bloom filter — a key it may hold is read,
// one it surely does not is not.
type fillState struct {
	owner *Filling
	space string
	seed  maphash.Seed
	bits  []uint64
}

// takeFill returns what the store knows for f's batch about to be
// decided (nil: nothing), and forgets it: the batch gives it back once
// decided (keepFill), and any other batch decided meanwhile finds none
// (begin). Store.mu is held.
func (s *Store) takeFill(f *Filling) *fillState {
	fs := s.fill
	s.fill = nil
	if f == nil || fs == nil || fs.owner != f {
		return nil
	}
	return fs
}

// startFill begins what the store knows for f when f's space is not
// registered as t (f's batch, just begun) sees the store: nothing of the
// space is held, nor in the batch committing. nil when it is registered.
func (t *tx) startFill(f *Filling) (*fillState, error) {
	if t.s.knownSpace(f.space) {
		return nil, nil
	}
	if _, ok, err := t.get(keys.SpaceKey(f.space)); err != nil || ok {
		return nil, err
	}
	return &fillState{owner: f, space: f.space, seed: maphash.MakeSeed(), bits: make([]uint64, fillBits/64)}, nil
}

// keepFill keeps fs for the next batch of its source once one of them is
// decided: every key of the kinds it tells that the batch wrote is noted
// in it (tx.note). Store.mu is held.
func (s *Store) keepFill(fs *fillState) { s.fill = fs }

// told reports whether k is of a kind fillState tells absent: an id, a
// record's head, a line place.
func told(k string) bool {
	switch k[0] {
	case keys.ID, keys.Line:
		return true
	case keys.History:
		return k[len(k)-1] == 0 // a head (keys.IsHead)
	}
	return false
}

// absent reports whether k, one of v's own keys (its id, its head, its
// line place), is surely not in the store nor in the batch committing:
// v is of the space, and no batch of the source wrote k.
func (fs *fillState) absent(v *record.Version, k []byte) bool {
	if !v.HasSpace || v.Space != fs.space {
		return false
	}
	h := maphash.Bytes(fs.seed, k)
	a, b := uint32(h), uint32(h>>32)|1
	for i := range uint32(fillHashes) {
		bit := (a + i*b) % fillBits
		if fs.bits[bit/64]&(1<<(bit%64)) == 0 {
			return true
		}
	}
	return false
}

func (fs *fillState) add(k string) {
	h := maphash.String(fs.seed, k)
	a, b := uint32(h), uint32(h>>32)|1
	for i := range uint32(fillHashes) {
		bit := (a + i*b) % fillBits
		fs.bits[bit/64] |= 1 << (bit % 64)
	}
}
