package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

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
// index and the counters. It returns the problems found, none when the store is sound.
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
	for _, pass := range []func(context.Context) error{c.versions, c.values, c.histories, c.orders, c.lines, c.roots, c.waiting, c.changes, c.files, c.filesIndex} {
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

// versions checks every held version: its value, its signature and the
// entries that index it. Verifying signatures is most of a check's work
// and each version's is independent, so versions are checked on every
// core, in chunks of the id table; what each found is added in key order,
// so the problems read as one pass would list them.
func (c *checker) versions(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type chunk struct {
		keys, vals [][]byte
		out        []versionCheck
		done       chan struct{}
	}
	const chunkLen = 256
	workers := runtime.GOMAXPROCS(0)
	todo := make(chan *chunk)
	inOrder := make(chan *chunk, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range todo {
				for i := range ch.keys {
					ch.out[i] = c.checkVersion(ch.keys[i], ch.vals[i])
				}
				close(ch.done)
			}
		}()
	}
	var scanErr error
	go func() {
		defer close(todo)
		defer close(inOrder)
		cur := &chunk{done: make(chan struct{})}
		send := func() error {
			ch := cur
			ch.out = make([]versionCheck, len(ch.keys))
			cur = &chunk{done: make(chan struct{})}
			// Queued in order first, so the chunk a worker takes is
			// always one the merge below will wait for.
			select {
			case inOrder <- ch:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case todo <- ch:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		scanErr = c.scan(ctx, keys.ID, func(k, v []byte) error {
			cur.keys, cur.vals = append(cur.keys, k), append(cur.vals, v)
			if len(cur.keys) == chunkLen {
				return send()
			}
			return nil
		})
		if scanErr == nil && len(cur.keys) > 0 {
			scanErr = send()
		}
	}()
	spaces := map[string]bool{}
	var err error
merge:
	for ch := range inOrder {
		select {
		case <-ch.done:
		case <-ctx.Done():
			err = ctx.Err()
			break merge
		}
		for i := range ch.out {
			if err = c.merge(&ch.out[i], spaces); err != nil {
				break merge
			}
		}
	}
	cancel()
	for range inOrder {
	}
	wg.Wait()
	c.stats.Spaces = int64(len(spaces))
	if err != nil {
		return err
	}
	return scanErr
}

// versionCheck is what checking one held version found.
type versionCheck struct {
	err error // the check could not go on: the store could not be read
	// pre are the problems found before its space is known to be
	// registered, post those after; space is its space, "" when it was
	// not read that far.
	pre, post []string
	space     string
	id        string
	vseq      uint64
	hasVseq   bool
	counted   bool // it counts as held: versions and bytes
	env, body int
	// classified: its history entry was read, and whole says whether it
	// is held whole (else a stub).
	classified, whole bool
}

// merge adds what checking a version found, checking once for each space
// that it is registered.
func (c *checker) merge(r *versionCheck, spaces map[string]bool) error {
	if r.err != nil {
		return r.err
	}
	if r.hasVseq {
		c.vseqs = append(c.vseqs, r.vseq)
	}
	for _, p := range r.pre {
		c.add("%s", p)
	}
	if r.counted {
		c.stats.Versions++
		c.stats.EnvelopeBytes += int64(r.env)
		c.stats.BodyBytes += int64(r.body)
	}
	if r.classified {
		if r.whole {
			c.stats.Whole++
		} else {
			c.stats.Stubs++
		}
	}
	if r.space != "" && !spaces[r.space] {
		spaces[r.space] = true
		if ok, err := c.has(keys.SpaceKey(r.space)); err != nil {
			return err
		} else if !ok {
			c.add("version %s: its space %s is not registered", r.id, r.space)
		}
	}
	for _, p := range r.post {
		c.add("%s", p)
	}
	return nil
}

// checkVersion checks the held version at id entry k (value val) against
// its value and the entries that index it. Safe to call from many
// goroutines: it only reads.
func (c *checker) checkVersion(k, val []byte) (r versionCheck) {
	d, _ := keys.Digest(k, 1)
	id := d.String()
	r.id = id
	problem := func(format string, a ...any) {
		if r.space == "" {
			r.pre = append(r.pre, fmt.Sprintf(format, a...))
		} else {
			r.post = append(r.post, fmt.Sprintf(format, a...))
		}
	}
	vseq, err := decodeVseq(val)
	if err != nil {
		problem("version %s: %v", id, err)
		return r
	}
	r.vseq, r.hasVseq = vseq, true
	vb, err := c.s.kv.Get(keys.VersionKey(vseq))
	if errors.Is(err, ErrNotFound) {
		problem("version %s: no value at %d", id, vseq)
		return r
	} else if err != nil {
		r.err = err
		return r
	}
	env, body, err := splitVersion(vb)
	if err != nil {
		problem("version %s: %v", id, err)
		return r
	}
	v, err := decodeHeld(env, body)
	if err != nil {
		problem("version %s: %v", id, err)
		return r
	}
	if v.ID != id {
		problem("version %s: stored under another id's digest (%s)", v.ID, id)
		return r
	}
	if err := c.vf.Verify(v); err != nil {
		problem("version %s: %v", id, err)
	}
	r.counted, r.env, r.body = true, len(env), len(body)
	if !v.HasSpace {
		problem("version %s: held without a space", id)
		return r
	}
	r.space = v.Space
	hb, err := c.s.kv.Get(keys.HistoryKey(keys.Rec(v.Space, v.Key), v.Seq, v.ID))
	if err != nil {
		problem("version %s: no history entry in record %s: %v", id, v.Key, err)
		return r
	}
	e, err := decodeHist(hb)
	if err != nil {
		problem("version %s: %v", id, err)
		return r
	}
	whole := v.Deleted || body != nil
	r.classified, r.whole = true, whole
	if e.retain != v.Retain || e.deleted != v.Deleted {
		problem("version %s: history entry says retain=%v deleted=%v, version is retain=%v deleted=%v",
			id, e.retain, e.deleted, v.Retain, v.Deleted)
	}
	if v.Retain && !whole {
		problem("version %s: retained but held as a stub (02 §4.5)", id)
	}
	if ok, err := c.has(keys.OrderKey(v.Space, record.UnixMillis(v.CreatedAt), d)); err != nil {
		r.err = err
		return r
	} else if !ok {
		problem("version %s: missing from the sync order", id)
	}
	if v.Log != nil {
		b, err := c.s.kv.Get(keys.LinePlace(v.Space, v.Author, v.Collection, v.Log.N))
		if err != nil && !errors.Is(err, ErrNotFound) {
			r.err = err
			return r
		}
		ds, _ := splitDigests(b)
		if !slices.Contains(ds, d) {
			problem("version %s: missing from its writer's line", id)
		}
	}
	if ok, err := c.has(keys.WaitKey(d)); err != nil {
		r.err = err
		return r
	} else if ok {
		problem("version %s: both held and waiting", id)
	}
	return r
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
		end, cs, err := readChangeEntry(k, val)
		if err != nil {
			c.add("change log entry %x: %v", k, err)
			return nil
		}
		if first := end - uint64(len(cs)) + 1; first != last+1 {
			c.add("change log: %d follows %d", first, last)
		}
		last = end
		for _, ch := range cs {
			for _, id := range []string{ch.ID, ch.Current, ch.Other} {
				if id == "" {
					continue
				}
				d, _ := keys.ParseExact(id)
				if ok, err := c.has(keys.IDKey(d)); err != nil {
					return err
				} else if !ok {
					c.add("change %d: version %s not held", ch.Seq, id)
				}
			}
		}
		return nil
	})
}
