package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// heldFact is what Check learned of one held version's value, read in
// the order versions are stored, and what the passes over the indexes
// found of it since. Each pass scans its own table in key order and looks
// versions up here, instead of reading their values at random (a point
// read a version into each table read most of the store's blocks again,
// and all but the smallest stores do not fit the block cache). The
// index entries a version should have are kept as sums of their bytes:
// the check is for damage, and a random seed a check makes collisions
// by chance negligible.
type heldFact struct {
	d     canonical.ID // the digest of its id (zero when the id is not exact)
	vseq  uint64
	seq   int64
	rec   uint64 // sum of keys.Rec(space, key)
	order uint64 // sum of its sync-order key
	coll  uint64 // sum of its collection
	line  uint64 // sum of its line place, when it has one
	value uint64 // sum of its stored envelope and body (a head's copy)
	env   int32  // bytes of its envelope
	body  int32  // bytes of its stored body
	space uint32 // its space, an index into checker.spaces
	flags heldFlag
	names uint8 // id entries naming its value (saturating at 2)
}

type heldFlag uint16

const (
	heldBad         heldFlag = 1 << iota // the value does not decode (checker.badValue)
	heldBadSig                           // it does not verify (checker.badSig)
	heldBody                             // its body is stored
	heldRetain                           // retain: true
	heldDeleted                          // a delete
	heldSpace                            // it names a space
	heldLog                              // it has a log place
	heldNamed                            // an id entry names it, under its own digest
	heldHist                             // its history entry was found where it belongs
	heldHistBad                          // … and does not decode (checker.badHist)
	heldHistRetain                       // … and says retain
	heldHistDeleted                      // … and says deleted
	heldOrdered                          // its sync-order key was found
	heldInLine                           // its line place names it
	heldWaiting                          // a waiting entry has its digest
	heldCurrent                          // its value is in 'c', its 'v' the mark
)

func (f *heldFact) is(fl heldFlag) bool { return f.flags&fl != 0 }

// sum is a seeded hash of parts, each length-prefixed so that different
// splits of the same bytes differ; a nil part differs from an empty one.
func (c *checker) sum(parts ...[]byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var n [9]byte
	for _, p := range parts {
		if p == nil {
			h.WriteByte(0xff)
			continue
		}
		h.Write(binary.AppendUvarint(n[:0], uint64(len(p))))
		h.Write(p)
	}
	return h.Sum64()
}

// heldValue is what checking one entry of the value table found.
type heldValue struct {
	f      heldFact
	badKey []byte // a key of the value table that is no version's
	space  string
	id     string // the version's id, when it is not exact
	bad    error  // the value does not decode
	sig    error  // the version does not verify
}

// held reads every stored version in the order they are stored and
// checks each: that it decodes and verifies (02 §3.3). Verifying is most
// of a check's work and each version's is independent, so versions are
// checked on every core, in chunks; what each found is kept in key order.
func (c *checker) held(ctx context.Context) error {
	return inParallel(ctx, c, keys.Version, c.checkValue, func(r *heldValue) error {
		if r.badKey != nil {
			c.badKeys = append(c.badKeys, badKey{at: len(c.facts), key: r.badKey})
			return nil
		}
		f := r.f
		i, ok := c.spaceIndex[r.space]
		if !ok {
			i = uint32(len(c.spaces))
			c.spaces = append(c.spaces, r.space)
			c.spaceIndex[r.space] = i
		}
		f.space = i
		if r.bad != nil {
			c.badValue[f.vseq] = r.bad
		}
		if r.sig != nil {
			c.badSig[f.vseq] = r.sig
		}
		if r.id != "" {
			c.oddID[f.vseq] = r.id
		}
		c.facts = append(c.facts, f)
		return nil
	})
}

// checkValue checks one entry of the value table. Safe to call from many
// goroutines: it only reads.
func (c *checker) checkValue(k, val []byte) (r heldValue) {
	if len(k) != 9 {
		r.badKey = k
		return r
	}
	f := &r.f
	f.vseq = binary.BigEndian.Uint64(k[1:])
	env, body, err := readValue(c.s.kv, f.vseq, val)
	if err != nil {
		f.flags, r.bad = heldBad, err
		return r
	}
	v, err := decodeHeld(env, body)
	if err != nil {
		f.flags, r.bad = heldBad, err
		return r
	}
	if rec, marked := markedRec(val); marked && v.HasSpace && !bytes.Equal(rec, keys.Rec(v.Space, v.Key)) {
		f.flags, r.bad = heldBad, Errorf(ErrCorrupt, "damaged: version value %d: it names a record that is not its own", f.vseq)
		return r
	}
	if inCurrent(val) {
		f.flags |= heldCurrent
	}
	d, ok := v.Digest()
	if ok {
		f.d = d
	} else {
		r.id = v.ID
	}
	if err := c.vf.Verify(v); err != nil {
		f.flags |= heldBadSig
		r.sig = err
	}
	f.env, f.body = int32(len(env)), int32(len(body))
	f.seq = v.Seq
	f.value = c.sum(env, body)
	f.rec = c.sum(keys.Rec(v.Space, v.Key))
	f.order = c.sum(keys.OrderKey(v.Space, record.UnixMillis(v.CreatedAt), d))
	f.coll = c.sum([]byte(v.Collection))
	r.space = v.Space
	if body != nil {
		f.flags |= heldBody
	}
	if v.Retain {
		f.flags |= heldRetain
	}
	if v.Deleted {
		f.flags |= heldDeleted
	}
	if v.HasSpace {
		f.flags |= heldSpace
	}
	if v.Log != nil {
		f.flags |= heldLog
		f.line = c.sum(keys.LinePlace(v.Space, v.Author, v.Collection, v.Log.N))
	}
	return r
}

type badKey struct {
	at  int // how many values came before it
	key []byte
}

// sortHeld orders the versions by digest for named and at.
func (c *checker) sortHeld() {
	c.byDigest = make([]uint32, 0, len(c.facts))
	for i := range c.facts {
		if !c.facts[i].is(heldBad) {
			c.byDigest = append(c.byDigest, uint32(i))
		}
	}
	slices.SortFunc(c.byDigest, func(a, b uint32) int {
		return slices.Compare(c.facts[a].d[:], c.facts[b].d[:])
	})
}

// at returns the version stored at vseq, nil when there is none.
func (c *checker) at(vseq uint64) *heldFact {
	i, ok := slices.BinarySearchFunc(c.facts, vseq, func(f heldFact, v uint64) int {
		switch {
		case f.vseq < v:
			return -1
		case f.vseq > v:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &c.facts[i]
}

// named returns the held version of digest d, nil when none is held: an
// id entry names a value holding that version.
func (c *checker) named(d canonical.ID) *heldFact {
	i, ok := slices.BinarySearchFunc(c.byDigest, d, func(j uint32, d canonical.ID) int {
		return slices.Compare(c.facts[j].d[:], d[:])
	})
	if !ok || !c.facts[c.byDigest[i]].is(heldNamed) {
		return nil
	}
	return &c.facts[c.byDigest[i]]
}

// names marks each version its id entry names.
func (c *checker) names(ctx context.Context) error {
	return c.scan(ctx, keys.ID, func(k, val []byte) error {
		vseq, err := decodeVseq(val)
		if err != nil {
			return nil // a problem of the version's (ids)
		}
		f := c.at(vseq)
		if f == nil {
			return nil
		}
		if f.names < 2 {
			f.names++
		}
		if d, ok := keys.Digest(k, 1); ok && !f.is(heldBad) && f.d == d && c.oddID[vseq] == "" {
			f.flags |= heldNamed
		}
		return nil
	})
}

// inParallel scans a table in chunks, calls work on each entry on every
// core, and merge on each result in key order.
func inParallel[T any](ctx context.Context, c *checker, prefix byte, work func(k, v []byte) T, merge func(*T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type chunk struct {
		keys, vals [][]byte
		out        []T
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
					ch.out[i] = work(ch.keys[i], ch.vals[i])
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
			ch.out = make([]T, len(ch.keys))
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
		scanErr = c.scan(ctx, prefix, func(k, v []byte) error {
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
			if err = merge(&ch.out[i]); err != nil {
				break merge
			}
		}
	}
	cancel()
	for range inOrder {
	}
	wg.Wait()
	if err != nil {
		return err
	}
	return scanErr
}
