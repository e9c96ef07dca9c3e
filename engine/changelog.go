package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"iter"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// The change log is one entry a batch, under the sequence of the batch's
// last change ('g' seq 2). Its value is runs of changes that came from
// one source, in order, each change with what the batch left of its
// version and record, so that what happened can be told again after a
// crash, as the batch left it, without reading the store:
//
//	run     = uvarint(len(from)) ‖ from ‖ uvarint(count) ‖ count × change
//	change  = digest (32 bytes) ‖ kind (1 byte) ‖ facts (1 byte)
//	          ‖ [current digest (32 bytes)] ‖ [other digest (32 bytes)]
//	facts   = bit 0: the version is withdrawn after the batch (02 §9.5)
//	          bit 1: it is its record's readable current version after it
//	          bit 2: another version is, its digest follows
//	          (neither bit 1 nor 2: none of the record reads)
//	other   = a fork or break's other version (Forked only, 02 §4.10)
//
// A batch from one source is one run; a version that waited (02 §9.5)
// keeps the source it arrived from, so waking it starts a run of its own,
// as do the standing changes and forks a batch finds (from ""). The
// source costs a few bytes a batch, not a change.
//
// Since layout 14 an entry names each version by where its value is
// ('g' seq 3): the same runs, each change
//
//	change  = uvarint(vseq) ‖ kind (1 byte) ‖ facts (1 byte)
//	          ‖ [uvarint(current vseq)] ‖ [uvarint(other vseq)]
//
// Every version a change names is held, and a vseq always names the same
// version, so its id read back later is the one the batch meant; a reader
// reads it from the version's value ([Store.ChangeLog]). A batch whose
// versions could not all be found by vseq writes the entry with digests
// (format 2), as layouts 9 to 13 did.
//
// Stores written before kept entries under 'g' seq alone, with changes of
// digest and kind only (33 bytes, a 4-byte count a run): they are read as
// changes without their facts (Change.Facts false).

const (
	factWithdrawn    = 1 << 0
	factCurrent      = 1 << 1
	factOtherCurrent = 1 << 2
)

// changeFormat is the last byte of a change log entry's key whose
// changes name their versions by digest; changeByVseq, by vseq.
const (
	changeFormat = 2
	changeByVseq = 3
)

// legacyChangeSize is a change's size in an entry of the earlier format.
const legacyChangeSize = 33

// pendingChange is a change of the batch, its facts made when the batch
// is sealed (what its later versions do changes them).
type pendingChange struct {
	d     canonical.ID
	kind  ChangeKind
	from  string
	rec   []byte       // its record (not for Forked)
	other canonical.ID // Forked: the other version
	ev    int          // its event in t.events, or -1
	vseq  uint64       // where d's value is, when known (0: look it up)
}

// change adds a change to the batch's change log entry: d was stored,
// completed, restood or forked (its record rec), having come from `from`,
// and stands as verdict; ev is its event's place in t.events. It returns
// the change's sequence.
func (t *tx) change(d canonical.ID, k ChangeKind, from string, rec []byte, verdict Verdict, ev int) uint64 {
	t.st.changeSeq++
	t.pend = append(t.pend, pendingChange{d: d, kind: k, from: from, rec: rec, ev: ev})
	if k != Forked {
		if t.verdicts == nil {
			t.verdicts = make(map[canonical.ID]Verdict)
		}
		t.verdicts[d] = verdict
	}
	return t.st.changeSeq
}

// changeEntry encodes the batch's changes by digest (format 2), each with
// what the batch left of its version's standing and record, and gives
// their events the same.
func (t *tx) changeEntry() ([]byte, error) {
	cs, _, err := t.changesMade()
	if err != nil {
		return nil, err
	}
	return encodeChanges(cs, nil), nil
}

// sealChanges encodes the batch's changes as changeEntry does, by vseq
// (format changeByVseq) when every version they name is found, else by
// digest (changeFormat).
func (t *tx) sealChanges() ([]byte, byte, error) {
	cs, curV, err := t.changesMade()
	if err != nil {
		return nil, 0, err
	}
	refs := make([]changeRef, len(cs))
	for i, c := range cs {
		r := &refs[i]
		if r.id = t.pend[i].vseq; r.id == 0 {
			if r.id, err = t.vseqOf(c.ID); err != nil {
				return nil, 0, err
			}
		}
		switch {
		case c.Kind == Forked:
			if r.other, err = t.vseqOf(c.Other); err != nil {
				return nil, 0, err
			}
		case !c.Current.IsZero() && c.Current != c.ID:
			r.cur = curV[i]
		}
		if r.id == 0 || c.Kind == Forked && r.other == 0 || !c.Current.IsZero() && c.Current != c.ID && r.cur == 0 {
			return encodeChanges(cs, nil), changeFormat, nil
		}
	}
	return encodeChanges(cs, refs), changeByVseq, nil
}

// vseqOf is where the held version d's value is, 0 when d is not held.
func (t *tx) vseqOf(d canonical.ID) (uint64, error) {
	b, ok, err := t.get(keys.IDKey(d))
	if !ok || err != nil {
		return 0, err
	}
	return decodeVseq(b)
}

// changeRef is where the values of the versions a change names are: the
// version's, the record's current one's (when another), a fork's other's;
// self: the version is its record's current one.
type changeRef struct {
	id, cur, other uint64
	self           bool
}

// changesMade is the batch's changes, each with what the batch left of its
// version's standing and record, and, for a change whose record's current
// version is another, where that one's value is (from the record's head);
// it gives the changes' events the same.
func (t *tx) changesMade() ([]Change, []uint64, error) {
	cs := make([]Change, 0, len(t.pend))
	curV := make([]uint64, len(t.pend))
	heads := make(map[string]head, len(t.pend)) // sized once: a batch is of many records
	seq := t.st.changeSeq - uint64(len(t.pend))
	for i, p := range t.pend {
		seq++
		c := Change{Seq: seq, ID: p.d, Kind: p.kind, From: p.from, Facts: true, Verdict: Stands}
		if t.verdicts[p.d] == Withdrawn {
			c.Verdict = Withdrawn
		}
		if p.kind != Forked {
			h, ok := heads[string(p.rec)]
			if !ok {
				var err error
				if h, _, err = t.head(p.rec); err != nil {
					return nil, nil, err
				}
				heads[t.ka.own(p.rec)] = h // a copy in the arena, not one of its own
			}
			switch {
			case !h.hasFirst || !h.firstH.whole:
			case h.first == p.d:
				c.Current = c.ID
			default:
				c.Current, curV[i] = h.first, h.firstV
			}
		}
		if p.kind == Forked {
			c.Other = p.other
		}
		if p.ev >= 0 {
			t.events[p.ev].Change = c
		}
		cs = append(cs, c)
	}
	return cs, curV, nil
}

// encodeChanges encodes changes as one change log entry's value: by
// digest, or, given refs (one a change), by vseq.
func encodeChanges(cs []Change, refs []changeRef) []byte {
	var out, run []byte
	var runFrom string
	var runN uint64
	for i, c := range cs {
		if i > 0 && c.From != runFrom {
			out = appendRun(out, run, runFrom, runN)
			run, runN = run[:0], 0
		}
		runFrom = c.From
		runN++
		var facts byte
		if c.Verdict == Withdrawn {
			facts |= factWithdrawn
		}
		other := c.Kind != Forked && !c.Current.IsZero() && c.Current != c.ID
		switch {
		case c.Kind == Forked || c.Current.IsZero():
		case !other:
			facts |= factCurrent
		default:
			facts |= factOtherCurrent
		}
		if refs == nil {
			run = append(append(run, c.ID[:]...), byte(c.Kind), facts)
			if other {
				run = append(run, c.Current[:]...)
			}
			if c.Kind == Forked {
				run = append(run, c.Other[:]...)
			}
			continue
		}
		r := refs[i]
		run = append(binary.AppendUvarint(run, r.id), byte(c.Kind), facts)
		if other {
			run = binary.AppendUvarint(run, r.cur)
		}
		if c.Kind == Forked {
			run = binary.AppendUvarint(run, r.other)
		}
	}
	if len(cs) > 0 {
		out = appendRun(out, run, runFrom, runN)
	}
	return out
}

// appendRun appends a run of n changes (run) from one source to out.
func appendRun(out, run []byte, from string, n uint64) []byte {
	out = binary.AppendUvarint(out, uint64(len(from)))
	out = append(out, from...)
	out = binary.AppendUvarint(out, n)
	return append(out, run...)
}

// readChangeEntry reads one change log entry: the sequence of its last
// change and its changes, in order, each with its sequence. The changes of
// an entry by vseq have no ids: readChanges gives where their values are.
func readChangeEntry(k, v []byte) (last uint64, cs []Change, err error) {
	last, cs, _, err = readChanges(k, v)
	return last, cs, err
}

// readChanges is readChangeEntry with, for an entry by vseq (refs not
// nil), where the values of the versions each change names are; its
// changes' ids (ID, Current when another, Other) are for the reader to
// fill in from them.
func readChanges(k, v []byte) (last uint64, cs []Change, refs []changeRef, err error) {
	bad := func() error { return Errorf(ErrCorrupt, "damaged: change log entry %x", k) }
	legacy := len(k) == 9
	byVseq := len(k) == 10 && k[9] == changeByVseq
	if !legacy && !byVseq && (len(k) != 10 || k[9] != changeFormat) || len(v) == 0 {
		return 0, nil, nil, bad()
	}
	last = binary.BigEndian.Uint64(k[1:9])
	// ref reads the next version named: its digest, or where its value
	// is (into at), a uvarint in its shortest form, never 0.
	ref := func(at *uint64) (canonical.ID, bool) {
		var d canonical.ID
		if byVseq {
			x, n := keys.ShortUvarint(v)
			if n == 0 || x == 0 {
				return d, false
			}
			*at, v = x, v[n:]
			return d, true
		}
		if len(v) < len(d) {
			return d, false
		}
		copy(d[:], v)
		v = v[len(d):]
		return d, true
	}
	minSize := 34 // digest, kind, facts
	if byVseq {
		minSize = 3
	}
	for len(v) > 0 {
		l, m := binary.Uvarint(v)
		if m <= 0 || l > uint64(len(v)-m) {
			return 0, nil, nil, bad()
		}
		from := string(v[m : m+int(l)])
		v = v[m+int(l):]
		var n uint64
		if legacy {
			if len(v) < 4 {
				return 0, nil, nil, bad()
			}
			n, v = uint64(binary.BigEndian.Uint32(v)), v[4:]
			if n > uint64(len(v)/legacyChangeSize) {
				return 0, nil, nil, bad()
			}
		} else {
			if n, m = binary.Uvarint(v); m <= 0 || n > uint64(len(v)-m)/uint64(minSize) {
				return 0, nil, nil, bad()
			}
			v = v[m:]
		}
		if n == 0 {
			return 0, nil, nil, bad()
		}
		for range n {
			var r changeRef
			d, ok := ref(&r.id)
			if !ok || len(v) < 1 {
				return 0, nil, nil, bad()
			}
			c := Change{ID: d, Kind: ChangeKind(v[0]), From: from}
			v = v[1:]
			if !legacy {
				if len(v) < 1 {
					return 0, nil, nil, bad()
				}
				facts := v[0]
				v = v[1:]
				c.Facts, c.Verdict = true, Stands
				if facts&factWithdrawn != 0 {
					c.Verdict = Withdrawn
				}
				switch {
				case facts&factCurrent != 0:
					c.Current, r.self = c.ID, true
				case facts&factOtherCurrent != 0:
					cur, ok := ref(&r.cur)
					if !ok {
						return 0, nil, nil, bad()
					}
					c.Current = cur
				}
				if c.Kind == Forked {
					o, ok := ref(&r.other)
					if !ok {
						return 0, nil, nil, bad()
					}
					c.Other = o
				}
			}
			cs = append(cs, c)
			if byVseq {
				refs = append(refs, r)
			}
		}
	}
	if uint64(len(cs)) > last {
		return 0, nil, nil, bad()
	}
	first := last - uint64(len(cs)) + 1
	for i := range cs {
		cs[i].Seq = first + uint64(i)
	}
	return last, cs, refs, nil
}

// idOfValue is the id of the version whose value is at vseq, read from
// the value: a change log entry names each version so.
func (s *Store) idOfValue(vseq uint64) (canonical.ID, error) {
	return s.idNamedBy("the change log", vseq)
}

// idOfVersionValue is idOfValue for a history entry by vseq.
func (s *Store) idOfVersionValue(vseq uint64) (canonical.ID, error) {
	return s.idNamedBy("a history entry", vseq)
}

// idNamedBy is the id of the version whose value is at vseq, which what
// names: a vseq naming no value is damage.
func (s *Store) idNamedBy(what string, vseq uint64) (canonical.ID, error) {
	vb, err := s.kv.Get(keys.VersionKey(vseq))
	if errors.Is(err, ErrNotFound) {
		return canonical.ID{}, Errorf(ErrCorrupt, "damaged: %s names version value %d, which is not there", what, vseq)
	}
	if err != nil {
		return canonical.ID{}, err
	}
	env, _, err := readValue(s.kv, vseq, vb)
	if err != nil {
		return canonical.ID{}, err
	}
	return idOfEnvelope(vseq, env)
}

// idOfEnvelope is the id the envelope of the version whose value is at
// vseq names; a value naming none in its canonical text is damage.
func idOfEnvelope(vseq uint64, env []byte) (canonical.ID, error) {
	v, err := decodeHeld(env, nil)
	if err != nil {
		return canonical.ID{}, err
	}
	d, ok := keys.ParseExact(v.ID)
	if !ok {
		return canonical.ID{}, Errorf(ErrCorrupt, "damaged: version value %d: id %q", vseq, v.ID)
	}
	return d, nil
}

// idsByVseq fills in the ids of changes read by vseq (readChanges), each
// read by id(vseq).
func idsByVseq(cs []Change, refs []changeRef, id func(vseq uint64) (canonical.ID, error)) error {
	for i := range cs {
		c, r := &cs[i], refs[i]
		var err error
		if c.ID, err = id(r.id); err != nil {
			return err
		}
		switch {
		case r.self:
			c.Current = c.ID
		case r.cur != 0:
			if c.Current, err = id(r.cur); err != nil {
				return err
			}
		}
		if r.other != 0 {
			if c.Other, err = id(r.other); err != nil {
				return err
			}
		}
	}
	return nil
}

// Changes yields the store's local log of what it took in, in commit order,
// from the change after `after` (0 for all): each version stored, and each
// body added to a held stub, with the source it came from. A mirror exports
// from the last sequence it wrote, leaving out what its own blob store
// brought. It streams from the KV; an error is yielded once, last. The
// sequence skips the standing changes the log also holds
// ([Store.ChangeLog]).
func (s *Store) Changes(ctx context.Context, after uint64) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		for c, err := range s.ChangeLog(ctx, after) {
			if err == nil && c.Kind != Stored && c.Kind != BodyAdded {
				continue
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// ChangeLog is [Store.Changes] with the standing changes and forks too:
// each held version the judge withdrew or restood (Withdrew, Restood,
// From "") and each fork or break found (Forked), in the batch that did
// it, each change with what that batch left (Change.Facts), so what
// happened outlives a crash that comes before anyone heard the event.
func (s *Store) ChangeLog(ctx context.Context, after uint64) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		if err := s.enter(); err != nil {
			yield(Change{}, err)
			return
		}
		defer s.leave()
		// The first entry at or after after+1 holds the change after after.
		it, err := s.kv.NewIter(keys.ChangeKey(after+1), []byte{keys.Change + 1})
		if err != nil {
			yield(Change{}, err)
			return
		}
		defer it.Close()
		for it.Next() {
			if err := s.stop(ctx); err != nil {
				yield(Change{}, err)
				return
			}
			last, cs, refs, err := readChanges(it.Key(), it.Value())
			if err != nil {
				yield(Change{}, err)
				return
			}
			if last <= after {
				continue
			}
			if refs != nil {
				if err := idsByVseq(cs, refs, s.idOfValue); err != nil {
					yield(Change{}, err)
					return
				}
			}
			for _, c := range cs {
				if c.Seq <= after {
					continue
				}
				if !yield(c, nil) {
					return
				}
			}
		}
		if err := it.Err(); err != nil {
			yield(Change{}, err)
		}
	}
}
