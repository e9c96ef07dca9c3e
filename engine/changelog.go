package engine

import (
	"context"
	"encoding/binary"
	"iter"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// The change log is one entry a batch, under the sequence of the batch's
// last change ('g' seq). Its value is runs of changes that came from one
// source, in order:
//
//	run    = uvarint(len(from)) ‖ from ‖ count (4 bytes) ‖ count × change
//	change = digest (32 bytes) ‖ kind (1 byte)
//
// A batch from one source is one run; a version that waited (02 §9.5)
// keeps the source it arrived from, so waking it starts a run of its own.
// The source costs a few bytes a batch, not a change.

const changeSize = 33

// change adds an entry to the change log: d was stored or completed,
// having come from `from`.
func (t *tx) change(d canonical.ID, k ChangeKind, from string) {
	t.st.changeSeq++
	if t.runAt == 0 || from != t.runFrom {
		t.changes = binary.AppendUvarint(t.changes, uint64(len(from)))
		t.changes = append(t.changes, from...)
		t.runAt, t.runFrom = len(t.changes), from
		t.changes = append(t.changes, 0, 0, 0, 0)
	}
	t.changes = append(append(t.changes, d[:]...), byte(k))
	n := binary.BigEndian.Uint32(t.changes[t.runAt:])
	binary.BigEndian.PutUint32(t.changes[t.runAt:], n+1)
}

// changeRun is the changes of one entry that came from one source.
type changeRun struct {
	from []byte
	es   []byte // changeSize bytes each
}

// changeEntry reads one change log entry: the sequence of its last change,
// its runs, and how many changes they hold.
func changeEntry(k, v []byte) (last uint64, runs []changeRun, n uint64, err error) {
	bad := func() error { return Errorf(ErrCorrupt, "damaged: change log entry %x", k) }
	if len(k) != 9 || len(v) == 0 {
		return 0, nil, 0, bad()
	}
	last = binary.BigEndian.Uint64(k[1:])
	for len(v) > 0 {
		l, m := binary.Uvarint(v)
		if m <= 0 || l > uint64(len(v)-m) {
			return 0, nil, 0, bad()
		}
		from := v[m : m+int(l)]
		v = v[m+int(l):]
		if len(v) < 4 {
			return 0, nil, 0, bad()
		}
		c := uint64(binary.BigEndian.Uint32(v))
		v = v[4:]
		if c == 0 || c > uint64(len(v)/changeSize) {
			return 0, nil, 0, bad()
		}
		runs = append(runs, changeRun{from: from, es: v[:c*changeSize]})
		v = v[c*changeSize:]
		n += c
	}
	if n > last {
		return 0, nil, 0, bad()
	}
	return last, runs, n, nil
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

// ChangeLog is [Store.Changes] with the standing changes too: each held
// version the judge withdrew or restood (Withdrew, Restood, From ""), in
// the batch that did it, so what happened outlives a crash that comes
// before anyone heard the event.
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
			last, runs, n, err := changeEntry(it.Key(), it.Value())
			if err != nil {
				yield(Change{}, err)
				return
			}
			seq := last - n + 1
			for _, r := range runs {
				if c := uint64(len(r.es) / changeSize); seq+c-1 <= after {
					seq += c // all before the first asked for
					continue
				}
				from := string(r.from)
				for i := 0; i < len(r.es); i, seq = i+changeSize, seq+1 {
					if seq <= after {
						continue
					}
					var d canonical.ID
					copy(d[:], r.es[i:])
					if !yield(Change{Seq: seq, ID: d.String(), Kind: ChangeKind(r.es[i+32]), From: from}, nil) {
						return
					}
				}
			}
		}
		if err := it.Err(); err != nil {
			yield(Change{}, err)
		}
	}
}
