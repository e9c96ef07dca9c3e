package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// maxProblems bounds what Check lists: past it, the store is badly broken
// and more lines help no one.
const maxProblems = 1000

// FileVerifier is an optional ability of a KV: checking its own files
// whole, every checksum included, where reading every key leaves some
// unread (a table's filter blocks). Check calls it first.
type FileVerifier interface {
	// VerifyFiles returns one line per damaged file, naming it and what
	// failed; an error only when it could not check.
	VerifyFiles(ctx context.Context) ([]string, error)
}

// Check re-verifies every held version (02 §3.3: id, signature, body hash)
// and every index against the versions: records' histories and heads, the
// sync order, writer lines, waiting versions, the change log and the
// counters. It returns the problems found, none when the store is sound.
// vf may be nil (a Verifier of Check's own). A KV that is a FileVerifier
// verifies its files first; damaged files are the problems returned, and
// nothing read from such a store is checked further. Damage met while
// reading is an error wrapping ErrCorrupt.
func (s *Store) Check(ctx context.Context, vf *record.Verifier) ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if fv, ok := s.kv.(FileVerifier); ok {
		if probs, err := fv.VerifyFiles(ctx); err != nil || len(probs) > 0 {
			return probs, err
		}
	}
	if vf == nil {
		vf = &record.Verifier{}
	}
	s.state.Lock()
	want := s.st
	s.state.Unlock()
	c := &checker{s: s, vf: vf, want: want}
	for _, pass := range []func(context.Context) error{c.versions, c.values, c.histories, c.orders, c.lines, c.roots, c.waiting, c.changes, c.files} {
		if err := pass(ctx); err != nil {
			return c.problems, err
		}
		if len(c.problems) >= maxProblems {
			return c.problems, nil
		}
	}
	var logPrev uint64
	if err := c.scan(ctx, keys.LogPrev, func(k, v []byte) error { logPrev++; return nil }); err != nil {
		return c.problems, err
	}
	if logPrev != want.logPrev {
		c.add("counters: %d versions counted waiting for their log.prev, %d held", want.logPrev, logPrev)
	}
	got := c.stats
	got.Changes = want.stats.Changes
	got.WaitingDropped, got.WaitingExpired = want.stats.WaitingDropped, want.stats.WaitingExpired
	if got != want.stats {
		c.add("counters: the store counts %+v but holds %+v", want.stats, got)
	}
	return c.problems, nil
}

type checker struct {
	s        *Store
	vf       *record.Verifier
	want     counters
	problems []string
	stats    Stats
	vseqs    []uint64 // the values the held ids name
}

func (c *checker) add(format string, a ...any) {
	if len(c.problems) < maxProblems {
		c.problems = append(c.problems, fmt.Sprintf(format, a...))
	}
}

// scan iterates a table, calling fn for each entry with copies of key and
// value.
func (c *checker) scan(ctx context.Context, prefix byte, fn func(k, v []byte) error) error {
	it, err := c.s.kv.NewIter([]byte{prefix}, []byte{prefix + 1})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(bytes.Clone(it.Key()), bytes.Clone(it.Value())); err != nil {
			return err
		}
	}
	return it.Err()
}

// files counts the held files and reads each whole against its hash and
// size (docs/stores.md, Files).
func (c *checker) files(ctx context.Context) error {
	if err := c.s.Files(ctx, func(fi FileInfo) bool {
		c.stats.Files++
		c.stats.FileBytes += fi.Size
		return true
	}); err != nil {
		return err
	}
	probs, err := c.s.VerifyFiles(ctx)
	for _, p := range probs {
		c.add("%s", p)
	}
	return err
}

func (c *checker) has(k []byte) (bool, error) {
	_, err := c.s.kv.Get(k)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (c *checker) versions(ctx context.Context) error {
	spaces := map[string]bool{}
	err := c.scan(ctx, keys.ID, func(k, val []byte) error {
		d, _ := keys.Digest(k, 1)
		id := d.String()
		vseq, err := decodeVseq(val)
		if err != nil {
			c.add("version %s: %v", id, err)
			return nil
		}
		c.vseqs = append(c.vseqs, vseq)
		vb, err := c.s.kv.Get(keys.VersionKey(vseq))
		if errors.Is(err, ErrNotFound) {
			c.add("version %s: no value at %d", id, vseq)
			return nil
		} else if err != nil {
			return err
		}
		env, body, err := splitVersion(vb)
		if err != nil {
			c.add("version %s: %v", id, err)
			return nil
		}
		v, err := decodeHeld(env, body)
		if err != nil {
			c.add("version %s: %v", id, err)
			return nil
		}
		if v.ID != id {
			c.add("version %s: stored under another id's digest (%s)", v.ID, id)
			return nil
		}
		if err := c.vf.Verify(v); err != nil {
			c.add("version %s: %v", id, err)
		}
		c.stats.Versions++
		c.stats.EnvelopeBytes += int64(len(env))
		c.stats.BodyBytes += int64(len(body))
		if !v.HasSpace {
			c.add("version %s: held without a space", id)
			return nil
		}
		if !spaces[v.Space] {
			spaces[v.Space] = true
			if ok, err := c.has(keys.SpaceKey(v.Space)); err != nil {
				return err
			} else if !ok {
				c.add("version %s: its space %s is not registered", id, v.Space)
			}
		}
		hb, err := c.s.kv.Get(keys.HistoryKey(keys.Rec(v.Space, v.Key), v.Seq, v.ID))
		if err != nil {
			c.add("version %s: no history entry in record %s: %v", id, v.Key, err)
			return nil
		}
		e, err := decodeHist(hb)
		if err != nil {
			c.add("version %s: %v", id, err)
			return nil
		}
		whole := v.Deleted || body != nil
		if whole {
			c.stats.Whole++
		} else {
			c.stats.Stubs++
		}
		if e.retain != v.Retain || e.deleted != v.Deleted {
			c.add("version %s: history entry says retain=%v deleted=%v, version is retain=%v deleted=%v",
				id, e.retain, e.deleted, v.Retain, v.Deleted)
		}
		if v.Retain && !whole {
			c.add("version %s: retained but held as a stub (02 §4.5)", id)
		}
		if ok, err := c.has(keys.OrderKey(v.Space, record.UnixMillis(v.CreatedAt), d)); err != nil {
			return err
		} else if !ok {
			c.add("version %s: missing from the sync order", id)
		}
		if v.Log != nil {
			b, err := c.s.kv.Get(keys.LinePlace(v.Space, v.Author, v.Collection, v.Log.N))
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			ds, _ := splitDigests(b)
			if !slices.Contains(ds, d) {
				c.add("version %s: missing from its writer's line", id)
			}
		}
		if ok, err := c.has(keys.WaitKey(d)); err != nil {
			return err
		} else if ok {
			c.add("version %s: both held and waiting", id)
		}
		return nil
	})
	c.stats.Spaces = int64(len(spaces))
	return err
}

// values checks that each version value is the one of exactly one held
// id, and comes before the counters' last.
func (c *checker) values(ctx context.Context) error {
	slices.Sort(c.vseqs)
	refs := c.vseqs
	return c.scan(ctx, keys.Version, func(k, _ []byte) error {
		if len(k) != 9 {
			c.add("version value key %x: bad length", k)
			return nil
		}
		vseq := binary.BigEndian.Uint64(k[1:])
		for len(refs) > 0 && refs[0] < vseq {
			refs = refs[1:]
		}
		switch {
		case len(refs) == 0 || refs[0] != vseq:
			c.add("version value %d: no id names it", vseq)
		case len(refs) > 1 && refs[1] == vseq:
			c.add("version value %d: more than one id names it", vseq)
		}
		if vseq > c.want.vseq {
			c.add("version value %d: past the last one counted (%d)", vseq, c.want.vseq)
		}
		return nil
	})
}

// histories checks each record's history against the versions, that each
// head has a history, and recomputes each head: the top is the first in 02 §4.3 order, the one that
// reads the first that stands; every other whole version is retained or a
// delete (§4.5).
func (c *checker) histories(ctx context.Context) error {
	var rec []byte
	var h head
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
		if err != nil {
			c.add("record %q: %v", rec[keys.SpaceLen:len(rec)-1], err)
		} else if h.hasFirst && !func() bool {
			_, env, body, err := readVersion(c.s.kv, h.first, h.first.String())
			h.firstEnv, h.firstBody = env, body
			return err == nil
		}() {
			c.add("record %q: no envelope for its first standing version", rec[keys.SpaceLen:len(rec)-1])
		} else if !got.equal(h) {
			c.add("record %q: head %+v, history gives %+v", rec[keys.SpaceLen:len(rec)-1], got, h)
		}
		return nil
	}
	var lone []byte // a head not yet followed by its record's history
	err := c.scan(ctx, keys.History, func(k, val []byte) error {
		if keys.IsHead(k) {
			if lone != nil {
				c.add("record head %q: no history", lone[keys.SpaceLen:len(lone)-1])
			}
			lone = k[1:]
			return nil
		}
		if len(k) < 1+keys.SpaceLen+1+8+canonical.IDLen {
			c.add("history key %x: too short", k)
			return nil
		}
		r := k[1 : len(k)-8-canonical.IDLen]
		if bytes.Equal(r, lone) {
			lone = nil
		}
		id := keys.HistoryID(k)
		d, ok := keys.ParseExact(id)
		e, err := decodeHist(val)
		if !ok || err != nil {
			c.add("history entry %q: bad key or value", id)
			return nil
		}
		seq := int64(1<<53 - 1 - binary.BigEndian.Uint64(k[len(k)-canonical.IDLen-8:]))
		vseq, env, body, err := readVersion(c.s.kv, d, id)
		if err != nil {
			c.add("history entry %s: no version: %v", id, err)
			return nil
		}
		hold := holding{whole: body != nil || e.deleted, retain: e.retain, deleted: e.deleted, bodyLen: len(body)}
		if !bytes.Equal(r, rec) {
			if err := flush(); err != nil {
				return err
			}
			rec, h, n = r, head{top: d, topSeq: seq, topV: vseq, topH: hold}, 0
		}
		n++
		isFirst := false
		if !h.hasFirst && e.verdict == Stands {
			h.hasFirst, h.first, h.firstSeq, h.firstV, h.firstH, isFirst = true, d, seq, vseq, hold, true
		}
		if hold.whole && !e.retain && !e.deleted && n > 1 && !isFirst {
			c.add("version %s: superseded, not retained, not the one that reads, yet whole (02 §4.5)", id)
		}
		v, err := decodeHeld(env, nil)
		if err == nil && (!bytes.Equal(keys.Rec(v.Space, v.Key), r) || v.Seq != seq) {
			c.add("history entry %s: filed under another record or seq", id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if lone != nil {
		c.add("record head %q: no history", lone[keys.SpaceLen:len(lone)-1])
	}
	return flush()
}

func (c *checker) orders(ctx context.Context) error {
	return c.scan(ctx, keys.Order, func(k, val []byte) error {
		if len(k) != 1+keys.SpaceLen+8+32 {
			c.add("sync order key %x: bad length", k)
			return nil
		}
		d, _ := keys.Digest(k, 1+keys.SpaceLen+8)
		_, env, _, err := readVersion(c.s.kv, d, d.String())
		if err != nil {
			c.add("sync order entry %s: no version: %v", d, err)
			return nil
		}
		v, err := decodeHeld(env, nil)
		if err != nil {
			return nil // reported by versions
		}
		if !bytes.Equal(keys.OrderKey(v.Space, record.UnixMillis(v.CreatedAt), d), k) || string(val) != v.Collection {
			c.add("sync order entry %s: does not match the version", d)
		}
		return nil
	})
}

func (c *checker) lines(ctx context.Context) error {
	return c.scan(ctx, keys.Line, func(k, val []byte) error {
		ds, err := splitDigests(val)
		if err != nil || len(ds) == 0 {
			c.add("line entry %x: bad value", k)
			return nil
		}
		for _, d := range ds {
			if ok, err := c.has(keys.IDKey(d)); err != nil {
				return err
			} else if !ok {
				c.add("line entry %s: no version", d)
			}
		}
		return nil
	})
}

// roots checks the index of versions by root: each entry names a held
// version of its space, and each held version has one entry (the root
// itself is the judge's, so it is not checked here).
func (c *checker) roots(ctx context.Context) error {
	var n int64
	err := c.scan(ctx, keys.Root, func(k, _ []byte) error {
		if len(k) != 1+keys.SpaceLen+32+32 {
			c.add("root index key %x: bad length", k)
			return nil
		}
		n++
		d, _ := keys.Digest(k, len(k)-32)
		_, env, _, err := readVersion(c.s.kv, d, d.String())
		if err != nil {
			c.add("root index entry %s: no version: %v", d, err)
			return nil
		}
		v, err := decodeHeld(env, nil)
		if err != nil {
			return nil // reported by versions
		}
		if t := keys.SpaceTag(v.Space); !bytes.Equal(k[1:1+keys.SpaceLen], t[:]) {
			c.add("root index entry %s: filed under another space", d)
		}
		return nil
	})
	if err == nil && n != c.stats.Versions {
		c.add("root index: %d entries for %d versions", n, c.stats.Versions)
	}
	return err
}

func (c *checker) waiting(ctx context.Context) error {
	err := c.scan(ctx, keys.Wait, func(k, val []byte) error {
		d, _ := keys.Digest(k, 1)
		w, err := decodeWaiting(val)
		if err != nil {
			c.add("waiting %s: %v", d, err)
			return nil
		}
		c.stats.Waiting++
		if w.v.ID != d.String() {
			c.add("waiting %s: holds version %s", d, w.v.ID)
		}
		if err := c.vf.Verify(w.v); err != nil {
			c.add("waiting %s: %v", d, err)
		}
		if ok, err := c.has(keys.WaitQueueKey(w.seq, d)); err != nil {
			return err
		} else if !ok {
			c.add("waiting %s: not in the waiting queue", d)
		}
		if err := c.checkWaitingSource(d, w); err != nil {
			return err
		}
		for _, id := range w.waits {
			if ok, err := c.has(keys.WaitForKey(keys.Awaited(id), d)); err != nil {
				return err
			} else if !ok {
				c.add("waiting %s: not indexed under %s", d, id)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range []byte{keys.WaitQueue, keys.WaitFor, keys.WaitFrom} {
		err := c.scan(ctx, p, func(k, _ []byte) error {
			d, _ := keys.Digest(k, len(k)-32)
			if ok, err := c.has(keys.WaitKey(d)); err != nil {
				return err
			} else if !ok {
				c.add("waiting index %c entry for %s: no waiting version", p, d)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) changes(ctx context.Context) error {
	var last uint64
	return c.scan(ctx, keys.Change, func(k, val []byte) error {
		end, runs, n, err := changeEntry(k, val)
		if err != nil {
			c.add("change log entry %x: %v", k, err)
			return nil
		}
		if first := end - n + 1; first != last+1 {
			c.add("change log: %d follows %d", first, last)
		}
		last = end
		seq := end - n + 1
		for _, r := range runs {
			for i := 0; i < len(r.es); i, seq = i+changeSize, seq+1 {
				d, _ := keys.Digest(r.es, i)
				if ok, err := c.has(keys.IDKey(d)); err != nil {
					return err
				} else if !ok {
					c.add("change %d: version %s not held", seq, d)
				}
			}
		}
		return nil
	})
}
