package engine

import (
	"context"
	"encoding/binary"
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
// Stores written before kept entries under 'g' seq alone, with changes of
// digest and kind only (33 bytes, a 4-byte count a run): they are read as
// changes without their facts (Change.Facts false).

const (
	factWithdrawn    = 1 << 0
	factCurrent      = 1 << 1
	factOtherCurrent = 1 << 2
)

// changeFormat is the last byte of a change log entry's key in this
// layout.
const changeFormat = 2

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

// changeEntry encodes the batch's changes, each with what the batch left
// of its version's standing and record, and gives their events the same.
func (t *tx) changeEntry() ([]byte, error) {
	var out, run []byte
	var runFrom string
	var runN uint64
	heads := map[string]head{}
	seq := t.st.changeSeq - uint64(len(t.pend))
	for i, p := range t.pend {
		seq++
		if i > 0 && p.from != runFrom {
			out = appendRun(out, run, runFrom, runN)
			run, runN = run[:0], 0
		}
		runFrom = p.from
		runN++
		c := Change{Seq: seq, ID: p.d, Kind: p.kind, From: p.from, Facts: true, Verdict: Stands}
		var facts byte
		if t.verdicts[p.d] == Withdrawn {
			facts |= factWithdrawn
			c.Verdict = Withdrawn
		}
		var cur canonical.ID
		if p.kind != Forked {
			h, ok := heads[string(p.rec)]
			if !ok {
				var err error
				if h, _, err = t.head(p.rec); err != nil {
					return nil, err
				}
				heads[string(p.rec)] = h
			}
			switch {
			case !h.hasFirst || !h.firstH.whole:
			case h.first == p.d:
				facts |= factCurrent
				c.Current = c.ID
			default:
				facts |= factOtherCurrent
				cur = h.first
				c.Current = cur
			}
		}
		run = append(append(run, p.d[:]...), byte(p.kind), facts)
		if facts&factOtherCurrent != 0 {
			run = append(run, cur[:]...)
		}
		if p.kind == Forked {
			run = append(run, p.other[:]...)
			c.Other = p.other
		}
		if p.ev >= 0 {
			t.events[p.ev].Change = c
		}
	}
	if len(t.pend) > 0 {
		out = appendRun(out, run, runFrom, runN)
	}
	return out, nil
}

// appendRun appends a run of n changes (run) from one source to out.
func appendRun(out, run []byte, from string, n uint64) []byte {
	out = binary.AppendUvarint(out, uint64(len(from)))
	out = append(out, from...)
	out = binary.AppendUvarint(out, n)
	return append(out, run...)
}

// readChangeEntry reads one change log entry: the sequence of its last
// change and its changes, in order, each with its sequence.
func readChangeEntry(k, v []byte) (last uint64, cs []Change, err error) {
	bad := func() error { return Errorf(ErrCorrupt, "damaged: change log entry %x", k) }
	legacy := len(k) == 9
	if !legacy && (len(k) != 10 || k[9] != changeFormat) || len(v) == 0 {
		return 0, nil, bad()
	}
	last = binary.BigEndian.Uint64(k[1:9])
	digest := func() (canonical.ID, bool) {
		var d canonical.ID
		if len(v) < len(d) {
			return d, false
		}
		copy(d[:], v)
		v = v[len(d):]
		return d, true
	}
	for len(v) > 0 {
		l, m := binary.Uvarint(v)
		if m <= 0 || l > uint64(len(v)-m) {
			return 0, nil, bad()
		}
		from := string(v[m : m+int(l)])
		v = v[m+int(l):]
		var n uint64
		if legacy {
			if len(v) < 4 {
				return 0, nil, bad()
			}
			n, v = uint64(binary.BigEndian.Uint32(v)), v[4:]
			if n > uint64(len(v)/legacyChangeSize) {
				return 0, nil, bad()
			}
		} else {
			if n, m = binary.Uvarint(v); m <= 0 || n > uint64(len(v)-m)/34 {
				return 0, nil, bad()
			}
			v = v[m:]
		}
		if n == 0 {
			return 0, nil, bad()
		}
		for range n {
			d, ok := digest()
			if !ok || len(v) < 1 {
				return 0, nil, bad()
			}
			c := Change{ID: d, Kind: ChangeKind(v[0]), From: from}
			v = v[1:]
			if !legacy {
				if len(v) < 1 {
					return 0, nil, bad()
				}
				facts := v[0]
				v = v[1:]
				c.Facts, c.Verdict = true, Stands
				if facts&factWithdrawn != 0 {
					c.Verdict = Withdrawn
				}
				switch {
				case facts&factCurrent != 0:
					c.Current = c.ID
				case facts&factOtherCurrent != 0:
					cur, ok := digest()
					if !ok {
						return 0, nil, bad()
					}
					c.Current = cur
				}
				if c.Kind == Forked {
					o, ok := digest()
					if !ok {
						return 0, nil, bad()
					}
					c.Other = o
				}
			}
			cs = append(cs, c)
		}
	}
	if uint64(len(cs)) > last {
		return 0, nil, bad()
	}
	first := last - uint64(len(cs)) + 1
	for i := range cs {
		cs[i].Seq = first + uint64(i)
	}
	return last, cs, nil
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
		if err := s.check(); err != nil {
			yield(Change{}, err)
			return
		}
		// The first entry at or after after+1 holds the change after after.
		it, err := s.kv.NewIter(keys.ChangeKey(after+1), []byte{keys.Change + 1})
		if err != nil {
			yield(Change{}, err)
			return
		}
		defer it.Close()
		for it.Next() {
			if err := ctx.Err(); err != nil {
				yield(Change{}, err)
				return
			}
			last, cs, err := readChangeEntry(it.Key(), it.Value())
			if err != nil {
				yield(Change{}, err)
				return
			}
			if last <= after {
				continue
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
