package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// histories checks each record's history against the versions, that each
// head has a history, and recomputes each head: the top is the first in 02 §4.3 order, the one that
// reads the first that stands; every other whole version is retained or a
// delete (§4.5).
func (c *checker) histories(ctx context.Context) error {
	var rec []byte
	var h head
	var first *heldFact // h.first's
	n := 0
	flush := func() error {
		if rec == nil {
			return nil
		}
		hb, err := c.s.kv.Get(keys.HeadKey(rec))
		if err != nil {
			c.add("record %q: no head: %v", rec[keys.SpaceLen:len(rec)-1], err)
			return nil
		}
		got, err := decodeHead(hb)
		h.num = got.num // which entries are the record's: checked by histories
		if err != nil {
			c.add("record %q: %v", rec[keys.SpaceLen:len(rec)-1], err)
		} else if h.hasFirst && first != nil && first.is(heldCurrent) == got.inHead {
			// A head names its first's value in 'c' (layout 16 on) or
			// holds it (11 to 15, its 'v' a marker): never both, never
			// neither.
			c.add("record %q: its head and the current versions' table disagree on where its current version's value is", rec[keys.SpaceLen:len(rec)-1])
		} else if h.hasFirst && got.inHead && c.sum(got.firstEnv, got.firstBody) != first.value {
			c.add("record %q: its head's copy of its first standing version is not the one stored", rec[keys.SpaceLen:len(rec)-1])
		} else if !got.equal(h) {
			c.add("record %q: head %+v, history gives %+v", rec[keys.SpaceLen:len(rec)-1], got, h)
		}
		return nil
	}
	// One record's entries, gathered in key order and taken in 02 §4.3
	// order: versions of one seq sort by id, which a key by vseq does
	// not say.
	type row struct {
		id   string
		d    canonical.ID
		seq  int64
		f    *heldFact
		e    histEntry
		home bool
	}
	var rows []row
	take := func(r []byte) error {
		slices.SortStableFunc(rows, func(a, b row) int {
			if a.seq != b.seq {
				return cmp.Compare(b.seq, a.seq)
			}
			return strings.Compare(a.id, b.id)
		})
		for _, x := range rows {
			f, e, id, d, seq := x.f, x.e, x.id, x.d, x.seq
			hold := holding{whole: f.is(heldBody) || e.deleted, retain: e.retain, deleted: e.deleted, bodyLen: int(f.body)}
			if !bytes.Equal(r, rec) {
				if err := flush(); err != nil {
					return err
				}
				rec, h, n = r, head{top: d, topSeq: seq, topV: f.vseq, topH: hold}, 0
			}
			n++
			isFirst := false
			if !h.hasFirst && e.verdict == Stands {
				h.hasFirst, h.first, h.firstSeq, h.firstV, h.firstH, isFirst = true, d, seq, f.vseq, hold, true
				first = f
			}
			if f.is(heldCurrent) && !isFirst {
				c.add("version %s: its value is in the current versions' table, and it is not its record's current version", id)
			}
			if hold.whole && !e.retain && !e.deleted && n > 1 && !isFirst {
				c.add("version %s: superseded, not retained, not the one that reads, yet whole (02 §4.5)", id)
			}
			if !x.home {
				c.add("history entry %s: filed under another record or seq", id)
			}
		}
		rows = rows[:0]
		return nil
	}
	var at []byte   // the record of the entries in rows
	var lone []byte // a head not yet followed by its record's history
	// entry takes one history entry, of the record r, into rows.
	entry := func(r []byte, he keys.HistEntry, val []byte) error {
		if !bytes.Equal(r, at) {
			if err := take(at); err != nil {
				return err
			}
			at = bytes.Clone(r)
		}
		e, err := decodeHist(val)
		seq := he.Seq
		var f *heldFact
		id, d := he.ID, he.D
		if he.ByVseq {
			id, f = c.entryID(he.Vseq)
			if f != nil {
				d = f.d
			}
		} else {
			f = c.named(d)
		}
		home := f != nil && f.rec == c.sum(r) && f.seq == seq // the entry the version should have
		if home {
			f.flags |= heldHist
			switch {
			case err != nil:
				f.flags |= heldHistBad
				c.badHist[f.vseq] = err
			default:
				if e.retain {
					f.flags |= heldHistRetain
				}
				if e.deleted {
					f.flags |= heldHistDeleted
				}
			}
		}
		if err != nil {
			c.add("history entry %s: bad key or value", id)
			return nil
		}
		if f == nil {
			c.add("history entry %s: no version: %v", id, fmt.Errorf("%w: version %s", ErrNotFound, id))
			return nil
		}
		rows = append(rows, row{id: id, d: d, seq: seq, f: f, e: e, home: home})
		return nil
	}
	// The records of layout 18 on: their heads (in 'h', by key) name
	// their numbers, under which their entries are ('H', by number).
	type numberedHead struct {
		num      uint64
		off, end int // its rec in recs
		seen     bool
	}
	var numbered []numberedHead
	var recs []byte
	var keyed []byte // a head naming a number: no entry may follow it under its key
	err := c.scan(ctx, keys.History, func(k, val []byte) error {
		if keys.IsHead(k) {
			if lone != nil {
				c.add("record head %q: no history", lone[keys.SpaceLen:len(lone)-1])
			}
			lone, keyed = k[1:], nil
			if h, err := decodeHead(val); err == nil && h.num != 0 {
				numbered = append(numbered, numberedHead{num: h.num, off: len(recs), end: len(recs) + len(k) - 1})
				recs = append(recs, k[1:]...)
				lone, keyed = nil, k[1:]
			}
			return nil
		}
		he, ok := keys.HistoryEntry(k)
		if !ok {
			c.add("history key %x: neither a version value's place nor an id", k)
			return nil
		}
		r := he.Rec
		if bytes.Equal(r, keyed) {
			id := he.ID
			if he.ByVseq {
				id, _ = c.entryID(he.Vseq)
			}
			c.add("history entry %s: under its record's key, where its record's head names a number", id)
			return nil
		}
		if bytes.Equal(r, lone) {
			lone = nil
		}
		return entry(r, he, val)
	})
	if err != nil {
		return err
	}
	if err := take(at); err != nil {
		return err
	}
	if lone != nil {
		c.add("record head %q: no history", lone[keys.SpaceLen:len(lone)-1])
	}
	recOf := func(n *numberedHead) []byte { return recs[n.off:n.end] }
	slices.SortStableFunc(numbered, func(a, b numberedHead) int { return cmp.Compare(a.num, b.num) })
	for i := range numbered {
		n := &numbered[i]
		r := recOf(n)
		if n.num > c.want.recs {
			c.add("record %q: its number %d is past the last one given (%d)", r[keys.SpaceLen:len(r)-1], n.num, c.want.recs)
		}
		if i > 0 && numbered[i-1].num == n.num {
			o := recOf(&numbered[i-1])
			c.add("record %q: its number %d is record %q's too", r[keys.SpaceLen:len(r)-1], n.num, o[keys.SpaceLen:len(o)-1])
		}
	}
	j := 0
	var unnamed uint64 // the last number no head names, its record named
	if err := c.scan(ctx, keys.HistNum, func(k, val []byte) error {
		he, ok := keys.HistoryEntry(k)
		if !ok {
			c.add("history key %x: neither a version value's place nor an id", k)
			return nil
		}
		for j < len(numbered) && numbered[j].num < he.Num {
			j++
		}
		if j == len(numbered) || numbered[j].num != he.Num {
			id, f := c.entryID(he.Vseq)
			if f != nil && he.Num != unnamed {
				unnamed = he.Num
				if err := c.recordOf(f.vseq, he.Num); err != nil {
					return err
				}
			}
			c.add("history entry %s: its record number %d names no record", id, he.Num)
			return nil
		}
		numbered[j].seen = true
		return entry(recOf(&numbered[j]), he, val)
	}); err != nil {
		return err
	}
	if err := take(at); err != nil {
		return err
	}
	for i := range numbered {
		if n := &numbered[i]; !n.seen && (i == 0 || numbered[i-1].num != n.num) {
			r := recOf(n)
			c.add("record head %q: no history", r[keys.SpaceLen:len(r)-1])
		}
	}
	return flush()
}

// recordOf names the record of the version at vseq, whose history
// entries are under a number no head names: its head is gone, or names
// another number.
func (c *checker) recordOf(vseq, num uint64) error {
	v, err := c.s.readHeld(vseq)
	if err != nil {
		return nil // the versions pass names it
	}
	hb, err := c.s.kv.Get(keys.HeadKey(keys.Rec(v.Space, v.Key)))
	if errors.Is(err, ErrNotFound) {
		c.add("record %q: no head: %v", v.Key, err)
		return nil
	}
	if err != nil {
		return err
	}
	if h, err := decodeHead(hb); err == nil {
		c.add("record %q: its head names number %d, its history entries %d", v.Key, h.num, num)
	}
	return nil
}

// entryID is how a problem names the version a history entry names by
// vseq, and its facts (nil when no sound version is there).
func (c *checker) entryID(vseq uint64) (string, *heldFact) {
	f := c.at(vseq)
	if f == nil || f.is(heldBad) {
		return fmt.Sprintf("at %d", vseq), nil
	}
	if id := c.oddID[f.vseq]; id != "" {
		return id, f
	}
	return f.d.String(), f
}
