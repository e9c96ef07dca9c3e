package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"

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
// sync order, writer lines, waiting versions, the change log, the files
// index and the counters. It returns the problems found, none when the
// store is sound.
// vf may be nil (a Verifier of Check's own). A KV that is a FileVerifier
// verifies its files first; damaged files are the problems returned, and
// nothing read from such a store is checked further. Damage met while
// reading is an error wrapping ErrCorrupt.
func (s *Store) Check(ctx context.Context, vf *record.Verifier) ([]string, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	if fv, ok := s.raw.(FileVerifier); ok {
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
	c := &checker{s: s, vf: vf, want: want, seed: maphash.MakeSeed(), spaceIndex: map[string]uint32{},
		badValue: map[uint64]error{}, badSig: map[uint64]error{}, badHist: map[uint64]error{}, oddID: map[uint64]string{}}
	// The versions are read first, in the order they are stored; each
	// index is then scanned in its own order against them; the problems
	// are listed as one pass over the id table and then one over each
	// index would find them.
	if err := c.held(ctx); err != nil {
		return nil, err
	}
	c.sortHeld()
	if err := c.names(ctx); err != nil {
		return nil, err
	}
	type pass struct {
		run   func(context.Context) error
		found []string
	}
	passes := []*pass{{run: c.versions}, {run: c.values}, {run: c.histories}, {run: c.orders}, {run: c.lines},
		{run: c.roots}, {run: c.waiting}, {run: c.changes}, {run: c.files}, {run: c.filesIndex}}
	listed := func() []string {
		var out []string
		for _, p := range passes {
			out = append(out, p.found...)
		}
		return out[:min(len(out), maxProblems)]
	}
	// versions lists what the other passes marked, so it runs after them.
	for _, p := range append(passes[2:], passes[:2]...) {
		c.problems = nil
		err := p.run(ctx)
		p.found = c.problems
		if err != nil {
			return listed(), err
		}
	}
	c.problems = nil
	if c.rootEntries != c.stats.Versions {
		c.add("root index: %d entries for %d versions", c.rootEntries, c.stats.Versions)
	}
	passes[5].found = append(passes[5].found, c.problems...)
	c.problems = listed()
	if len(c.problems) >= maxProblems {
		return c.problems, nil
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
	problems []string // those of the pass running
	stats    Stats

	// What the versions pass (held) found, in the order versions are
	// stored, and the marks the passes over the indexes left on them.
	seed       maphash.Seed
	facts      []heldFact
	byDigest   []uint32 // facts by digest (those that decode)
	badKeys    []badKey
	spaces     []string
	spaceIndex map[string]uint32
	badValue   map[uint64]error  // by vseq: why the value does not decode
	badSig     map[uint64]error  // … why it does not verify
	badHist    map[uint64]error  // … why its history entry does not decode
	oddID      map[uint64]string // … its id, when that is not exact

	rootEntries int64
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
		if err := c.s.stop(ctx); err != nil {
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

// versions lists, in the order of the id table, what is wrong with each
// held version: its value (held found it), and the entries that index it
// (the passes over the indexes marked those they found).
func (c *checker) versions(ctx context.Context) error {
	spaces := map[uint32]bool{}
	err := c.scan(ctx, keys.ID, func(k, val []byte) error {
		d, _ := keys.Digest(k, 1)
		id := d.String()
		vseq, err := decodeVseq(val)
		if err != nil {
			c.add("version %s: %v", id, err)
			return nil
		}
		f := c.at(vseq)
		switch {
		case f == nil:
			c.add("version %s: no value at %d", id, vseq)
			return nil
		case f.is(heldBad):
			c.add("version %s: %v", id, c.badValue[vseq])
			return nil
		case f.d != d || c.oddID[vseq] != "":
			other := c.oddID[vseq]
			if other == "" {
				other = f.d.String()
			}
			c.add("version %s: stored under another id's digest (%s)", other, id)
			return nil
		}
		if f.is(heldBadSig) {
			c.add("version %s: %v", id, c.badSig[vseq])
		}
		c.stats.Versions++
		c.stats.EnvelopeBytes += int64(f.env)
		c.stats.BodyBytes += int64(f.body)
		if !f.is(heldSpace) {
			c.add("version %s: held without a space", id)
			return nil
		}
		if !spaces[f.space] {
			spaces[f.space] = true
			if ok, err := c.has(keys.SpaceKey(c.spaces[f.space])); err != nil {
				return err
			} else if !ok {
				c.add("version %s: its space %s is not registered", id, c.spaces[f.space])
			}
		}
		switch {
		case !f.is(heldHist):
			key := "?"
			if v, err := c.s.readHeld(vseq); err == nil {
				key = v.Key
			}
			c.add("version %s: no history entry in record %s: %v", id, key, ErrNotFound)
			return nil
		case f.is(heldHistBad):
			c.add("version %s: %v", id, c.badHist[vseq])
			return nil
		}
		whole := f.is(heldDeleted) || f.is(heldBody)
		if whole {
			c.stats.Whole++
		} else {
			c.stats.Stubs++
		}
		if f.is(heldHistRetain) != f.is(heldRetain) || f.is(heldHistDeleted) != f.is(heldDeleted) {
			c.add("version %s: history entry says retain=%v deleted=%v, version is retain=%v deleted=%v",
				id, f.is(heldHistRetain), f.is(heldHistDeleted), f.is(heldRetain), f.is(heldDeleted))
		}
		if f.is(heldRetain) && !whole {
			c.add("version %s: retained but held as a stub (02 §4.5)", id)
		}
		if !f.is(heldOrdered) {
			c.add("version %s: missing from the sync order", id)
		}
		if f.is(heldLog) && !f.is(heldInLine) {
			c.add("version %s: missing from its writer's line", id)
		}
		if f.is(heldWaiting) {
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
	bad := c.badKeys
	for i := range c.facts {
		for len(bad) > 0 && bad[0].at == i {
			c.add("version value key %x: bad length", bad[0].key)
			bad = bad[1:]
		}
		f := &c.facts[i]
		switch f.names {
		case 0:
			c.add("version value %d: no id names it", f.vseq)
		case 1:
		default:
			c.add("version value %d: more than one id names it", f.vseq)
		}
		if f.vseq > c.want.vseq {
			c.add("version value %d: past the last one counted (%d)", f.vseq, c.want.vseq)
		}
	}
	for _, b := range bad {
		c.add("version value key %x: bad length", b.key)
	}
	// Each current version's value ('c') is one a version value marks.
	return c.scan(ctx, keys.Current, func(k, _ []byte) error {
		if len(k) != 9 {
			c.add("current version value key %x: bad length", k)
			return nil
		}
		vseq := binary.BigEndian.Uint64(k[1:])
		if f := c.at(vseq); f == nil || !f.is(heldCurrent) {
			c.add("current version value %d: no version value marks it", vseq)
		}
		return nil
	})
}

func (c *checker) orders(ctx context.Context) error {
	return c.scan(ctx, keys.Order, func(k, val []byte) error {
		if len(k) != 1+keys.SpaceLen+8+32 {
			c.add("sync order key %x: bad length", k)
			return nil
		}
		d, _ := keys.Digest(k, 1+keys.SpaceLen+8)
		f := c.named(d)
		if f == nil {
			c.add("sync order entry %s: no version: %v", d, fmt.Errorf("%w: version %s", ErrNotFound, d))
			return nil
		}
		keyed := c.sum(k) == f.order
		if keyed {
			f.flags |= heldOrdered
		}
		coll, vseq, ok := readOrder(val)
		switch {
		case !ok:
			c.add("sync order entry %s: bad value", d)
		case !keyed || c.sum(coll) != f.coll:
			c.add("sync order entry %s: does not match the version", d)
		case vseq != 0 && vseq != f.vseq:
			c.add("sync order entry %s: names the value at %d, its version's is at %d", d, vseq, f.vseq)
		}
		return nil
	})
}

func (c *checker) lines(ctx context.Context) error {
	return c.scan(ctx, keys.Line, func(k, val []byte) error {
		vseqs, ds, byVseq, ok := keys.ReadPlace(val)
		if !ok {
			c.add("line entry %x: bad value", k)
			return nil
		}
		place := c.sum(k)
		mark := func(f *heldFact) {
			if f.is(heldLog) && f.line == place {
				f.flags |= heldInLine
			}
		}
		if byVseq {
			for _, vseq := range vseqs {
				if f := c.at(vseq); f == nil || !f.is(heldNamed) {
					c.add("line entry at %d: no version", vseq)
				} else {
					mark(f)
				}
			}
			return nil
		}
		for _, d := range ds {
			if f := c.named(d); f == nil {
				c.add("line entry %s: no version", d)
			} else {
				mark(f)
			}
		}
		return nil
	})
}

// roots checks the index of versions by root: each entry names a held
// version of its space, and each held version has one entry (the root
// itself is the judge's, so it is not checked here). Check compares the
// count of entries with the versions' once versions has counted them.
func (c *checker) roots(ctx context.Context) error {
	tags := map[uint32][keys.SpaceLen]byte{}
	return c.scan(ctx, keys.Root, func(k, _ []byte) error {
		vseq, d, byVseq, ok := keys.RootEntry(k)
		if !ok {
			c.add("root index key %x: neither a version value's place nor an id", k)
			return nil
		}
		c.rootEntries++
		var f *heldFact
		if byVseq {
			if f = c.at(vseq); f == nil || !f.is(heldNamed) {
				c.add("root index entry at %d: no version: %v", vseq, fmt.Errorf("%w: version value %d", ErrNotFound, vseq))
				return nil
			}
			d = f.d
		} else if f = c.named(d); f == nil {
			c.add("root index entry %s: no version: %v", d, fmt.Errorf("%w: version %s", ErrNotFound, d))
			return nil
		}
		t, ok := tags[f.space]
		if !ok {
			t = keys.SpaceTag(c.spaces[f.space])
			tags[f.space] = t
		}
		if !bytes.Equal(k[1:1+keys.SpaceLen], t[:]) {
			c.add("root index entry %s: filed under another space", d)
		}
		return nil
	})
}

func (c *checker) waiting(ctx context.Context) error {
	err := c.scan(ctx, keys.Wait, func(k, val []byte) error {
		d, _ := keys.Digest(k, 1)
		if f := c.named(d); f != nil {
			f.flags |= heldWaiting
		}
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
		end, cs, refs, err := readChanges(k, val)
		if err != nil {
			c.add("change log entry %x: %v", k, err)
			return nil
		}
		if first := end - uint64(len(cs)) + 1; first != last+1 {
			c.add("change log: %d follows %d", first, last)
		}
		last = end
		if refs != nil {
			// An entry by vseq: each version it names is the one whose
			// value is there, and one not held is named here.
			return idsByVseq(cs, refs, func(vseq uint64) (canonical.ID, error) {
				if f := c.at(vseq); f != nil && f.is(heldNamed) {
					return f.d, nil
				}
				c.add("change log entry %x: version value %d not held", k, vseq)
				return canonical.ID{}, nil
			})
		}
		for _, ch := range cs {
			for _, d := range []canonical.ID{ch.ID, ch.Current, ch.Other} {
				if d.IsZero() {
					continue
				}
				if c.named(d) == nil {
					c.add("change %d: version %s not held", ch.Seq, d)
				}
			}
		}
		return nil
	})
}

// readHeld reads and decodes the version stored at vseq.
func (s *Store) readHeld(vseq uint64) (*record.Version, error) {
	vb, err := s.kv.Get(keys.VersionKey(vseq))
	if err != nil {
		return nil, err
	}
	env, body, err := readValue(s.kv, vseq, vb)
	if err != nil {
		return nil, err
	}
	return decodeHeld(env, body)
}
