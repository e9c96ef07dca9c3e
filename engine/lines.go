package engine

import (
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// maxForkScan bounds how many other versions at one place of a line are
// compared with a new one: one proof is enough, and a writer that forked a
// place many times must not make each arrival cost more.
const maxForkScan = 8

// line records v's place in its writer's line (02 §4.10) and looks for a
// fork (another id at that place) or a break (log.prev naming a version
// that is not one place before it in the line), in both directions: v
// against what is held, and what is held against v. vseq is where v's
// value is: the place names it by that (keys.PlaceValue). tag is v's
// space's keys.SpaceTag.
func (t *tx) line(d canonical.ID, vseq uint64, v *record.Version, tag [keys.SpaceLen]byte) error {
	if v.Log == nil {
		return nil
	}
	// Kept in the arena at once: keys are built at its tail as the place
	// is read and compared.
	place := keyBytes(t.ka.own(keys.AppendLinePlaceTag(t.key(), tag, v.Author, v.Collection, v.Log.N)))
	others, ds, err := t.place(place)
	if err != nil {
		return err
	}
	scanned := 0
	fork := func(ov *record.Version, ok bool, err error) error {
		scanned++
		if err != nil || !ok {
			return err
		}
		if p, ok := record.Fork(v, ov); ok {
			return t.proof(p)
		}
		return nil
	}
	for _, o := range others {
		if scanned == maxForkScan {
			break
		}
		if err := fork(t.envelopeAt(o)); err != nil {
			return err
		}
	}
	for _, o := range ds {
		if scanned == maxForkScan {
			break
		}
		if err := fork(t.envelope(o)); err != nil {
			return err
		}
	}
	val, err := t.placeWith(others, ds, d, vseq)
	if err != nil {
		return err
	}
	t.set(place, val)
	if v.Log.N > 0 {
		pd, isID := v.LogPrevDigest()
		p, held := (*record.Version)(nil), false
		if isID {
			if p, held, err = t.envelope(pd); err != nil {
				return err
			}
		}
		if held {
			if proof, ok := record.Break(v, p); ok {
				if err := t.proof(proof); err != nil {
					return err
				}
			}
		} else {
			if isID {
				t.gaps[d] = struct{}{}
			}
			k := keys.LogPrevKey(keys.Awaited(v.Log.Prev))
			namers, err := t.digestList(k)
			if err != nil {
				return err
			}
			t.set(k, appendDigests(namers, d))
			if len(namers) == 0 {
				t.st.logPrev++
			}
		}
	}
	if t.st.logPrev == 0 {
		return nil
	}
	// Versions held before v whose log.prev names it.
	k := keys.LogPrevKey(d)
	namers, err := t.digestList(k)
	if err != nil || len(namers) == 0 {
		return err
	}
	for _, w := range namers {
		wv, ok, err := t.envelope(w)
		if err != nil {
			return err
		}
		if ok {
			if proof, ok := record.Break(wv, v); ok {
				if err := t.proof(proof); err != nil {
					return err
				}
			}
		}
	}
	t.st.logPrev--
	t.del(k)
	return nil
}

// place reads the versions a line's place names: by vseq, or (a place a
// store of a layout before 13 wrote) by digest; none when it is absent.
func (t *tx) place(k []byte) (vseqs []uint64, ds []canonical.ID, err error) {
	b, ok, err := t.get(k)
	if !ok || err != nil {
		return nil, nil, err
	}
	vseqs, ds, _, ok = keys.ReadPlace(b)
	if !ok {
		return nil, nil, Errorf(ErrCorrupt, "damaged: line place %x: a value of %d bytes", k, len(b))
	}
	return vseqs, ds, nil
}

// placeWith is a place's value with the version d, at vseq, added to the
// versions it named (by vseq, or by digest ds). A place an earlier layout
// wrote is written again by vseq, each digest looked up; one naming a
// version not held (damage, which check names) keeps its digests, d's
// added.
func (t *tx) placeWith(vseqs []uint64, ds []canonical.ID, d canonical.ID, vseq uint64) ([]byte, error) {
	if len(ds) > 0 {
		vseqs = make([]uint64, 0, len(ds)+1)
		for _, o := range ds {
			sb, ok, err := t.get(keys.IDKey(o))
			if err != nil {
				return nil, err
			}
			if !ok {
				return appendDigests(ds, d), nil
			}
			at, err := decodeVseq(sb)
			if err != nil {
				return nil, err
			}
			vseqs = append(vseqs, at)
		}
	}
	out := make([]uint64, 0, len(vseqs)+1)
	for _, o := range vseqs {
		if o != vseq {
			out = append(out, o)
		}
	}
	return keys.PlaceValue(append(out, vseq)), nil
}

// envelopeAt is envelope for the version whose value is at vseq; ok
// false when there is none (damage, which check names).
func (t *tx) envelopeAt(vseq uint64) (*record.Version, bool, error) {
	env, _, ok, err := t.valueAt(vseq)
	if !ok || err != nil {
		return nil, false, err
	}
	v, err := decodeHeld(env, nil)
	return v, err == nil, err
}

// digestList reads a value that is a list of 32-byte digests; none when
// the key is absent.
func (t *tx) digestList(k []byte) ([]canonical.ID, error) {
	b, ok, err := t.get(k)
	if !ok || err != nil {
		return nil, err
	}
	return splitDigests(b)
}

func splitDigests(b []byte) ([]canonical.ID, error) {
	if len(b)%32 != 0 {
		return nil, Errorf(ErrCorrupt, "damaged: a list of digests of %d bytes", len(b))
	}
	out := make([]canonical.ID, len(b)/32)
	for i := range out {
		copy(out[i][:], b[i*32:])
	}
	return out, nil
}

func appendDigests(ds []canonical.ID, d canonical.ID) []byte {
	b := make([]byte, 0, 32*(len(ds)+1))
	for _, x := range ds {
		if x == d {
			d = canonical.ID{} // already listed
		}
		b = append(b, x[:]...)
	}
	if d != (canonical.ID{}) {
		b = append(b, d[:]...)
	}
	return b
}

// digests lists the 32-byte digests that end the keys under prefix (at most
// limit, all when limit < 0).
func (t *tx) digests(prefix []byte, limit int) ([]canonical.ID, error) {
	var out []canonical.ID
	err := t.scan(prefix, keys.PrefixEnd(prefix), func(k, _ []byte) bool {
		if d, ok := keys.Digest(k, len(k)-32); ok {
			out = append(out, d)
		}
		return limit < 0 || len(out) < limit
	})
	return out, err
}

// proof records a line proof durably and as an event.
func (t *tx) proof(p *record.LineProof) error {
	a, _ := p.A.Digest()
	b, _ := p.B.Digest()
	t.set(keys.ProofKey(p.A.Space, a, b), []byte(p.Kind))
	t.events = append(t.events, Event{Kind: EventLine, Space: p.A.Space, ID: p.A.ID, Proof: p, Version: p.A})
	// The change log keeps it with the batch, so its event outlives a
	// crash before anyone heard it.
	at := len(t.events) - 1
	t.events[at].Seq = t.change(a, Forked, "", nil, Stands, at)
	t.pend[len(t.pend)-1].other = b
	return nil
}
