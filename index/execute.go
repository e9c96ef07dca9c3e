package index

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/minca-go/minca/engine"
)

// run reads the page.
func (r *runner) run(ctx context.Context) error {
	r.place = placeOf(r.space, r.q.Collection)
	r.pp = r.prefix(tPrimary)
	ss, ordered := r.plan()
	if ordered {
		return r.merged(ctx, ss)
	}
	return r.heaped(ctx, ss)
}

// fetch makes the doc of a stream's entry: read from a primary entry, or
// looked up through a locator or a secondary entry. ok false when the
// record has gone since the entry was read. The doc is reused by the next
// fetch, and its bytes may be the iterator's ([runner.keep] copies it).
func (r *runner) fetch(s *stream, k, v []byte) (*doc, bool, error) {
	pp := r.pp
	d := &r.scratch
	if s.table == tPrimary {
		d, err := readPrimary(d, r.space, r.q.Collection, k[len(pp):], v)
		return d, err == nil, err
	}
	pk, err := r.primaryKey(s, k, v)
	if err != nil {
		return nil, false, err
	}
	pv, err := r.kv.Get(pk)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	// Get returned a copy: the doc may keep it.
	d, err = readPrimary(d, r.space, r.q.Collection, pk[len(pp):], pv)
	return d, err == nil, err
}

// primaryKey is the key of the primary entry a locator or a secondary
// entry (k, v) leads to.
func (r *runner) primaryKey(s *stream, k, v []byte) ([]byte, error) {
	if s.table == tLocator {
		if len(v) < createdLen {
			return nil, errors.New("minca/index: corrupt locator entry")
		}
		return appendSuffix(slices.Clone(r.pp), v[:createdLen], string(k[s.base:len(k)-1])), nil
	}
	_, _, at, ok := splitSuffix(k)
	if !ok {
		return nil, errors.New("minca/index: corrupt index entry")
	}
	return cat(r.pp, k[at:]), nil
}

// manyGetter is a reader that looks up a sorted run of keys in one pass
// (engine.KV.GetMany, through the store's index reader).
type manyGetter interface {
	GetMany(keys [][]byte, found func(i int, value []byte)) error
}

// lookup is an entry of a secondary stream waiting for its primary entry.
type lookup struct {
	s            *stream
	pos, pk, tag []byte
}

// lookups reads the primary entries of ls in one sorted pass and gives
// those that pass, in order; false when the page is done.
func (r *runner) lookups(ls []lookup) (bool, error) {
	order := make([]int, len(ls))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(ls[a].pk, ls[b].pk) })
	keys := make([][]byte, 0, len(ls))
	at := make([]int, 0, len(ls)) // keys[j] is ls[at[j]]'s
	for _, i := range order {
		if len(keys) > 0 && bytes.Equal(keys[len(keys)-1], ls[i].pk) {
			continue
		}
		keys, at = append(keys, ls[i].pk), append(at, i)
	}
	vals := make([][]byte, len(ls))
	if err := r.g.GetMany(keys, func(j int, v []byte) { vals[at[j]] = r.arena.bytes(r.q.Limit, v) }); err != nil {
		return false, err
	}
	for i, l := range ls {
		if vals[i] == nil {
			continue // gone since its entry was read
		}
		d, err := readPrimary(&r.scratch, r.space, r.q.Collection, l.pk[len(r.pp):], vals[i])
		if err != nil {
			return false, err
		}
		ok, err := r.passes(l.s, l.tag, d)
		if err != nil {
			return false, err
		}
		// An entry of a declared field may be older than the record read
		// through it; other positions are the record's own key.
		if ok && (l.s.table != tField || bytes.Equal(l.tag, d.tagOf()) || bytes.Equal(position(r.q.Order, d), l.pos)) {
			if !r.give(d, l.pos) {
				return false, nil
			}
		}
		if d.bad != nil {
			return false, d.bad
		}
	}
	return true, nil
}

// merged reads ordered streams together, in position order, until the
// page is full.
func (r *runner) merged(ctx context.Context, ss []stream) error {
	desc := r.q.Order.Desc
	its := make([]engine.Iterator, len(ss))
	heads := make([]bool, len(ss))
	defer func() {
		for _, it := range its {
			if it != nil {
				it.Close()
			}
		}
	}()
	for i := range ss {
		if ss[i].hi != nil && bytes.Compare(ss[i].lo, ss[i].hi) >= 0 {
			continue
		}
		var it engine.Iterator
		var err error
		if desc {
			it, err = r.kv.(engine.ReverseReader).NewReverseIter(ss[i].lo, ss[i].hi)
		} else {
			it, err = r.kv.NewIter(ss[i].lo, ss[i].hi)
		}
		if err != nil {
			return err
		}
		its[i], heads[i] = it, it.Next()
	}
	var last []byte
	// Entries of secondary streams wait in pending, as many as the page
	// may still take, and their primary entries are read in one pass.
	var pending []lookup
	more := true
	for more {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(pending) > 0 && len(pending) >= r.q.Limit-r.n {
			ok, err := r.lookups(pending)
			if err != nil {
				return err
			}
			pending, more = pending[:0], ok
			continue
		}
		best := -1
		for i, it := range its {
			if it != nil && heads[i] && (best < 0 || before(r.q.Order, it.Key()[ss[i].base:], its[best].Key()[ss[best].base:])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		it, s := its[best], &ss[best]
		k := it.Key()
		pos := k[s.base:]
		// A record read through two streams comes from both at once;
		// one stream's positions only ever grow.
		if len(its) == 1 || last == nil || !bytes.Equal(pos, last) {
			if len(its) > 1 {
				last = append(last[:0], pos...)
			}
			if s.table != tPrimary {
				pk, err := r.primaryKey(s, k, it.Value())
				if err != nil {
					return err
				}
				pending = append(pending, lookup{s: s, pos: slices.Clone(pos), pk: pk, tag: slices.Clone(it.Value())})
				heads[best] = it.Next()
				continue
			}
			d, ok, err := r.fetch(s, k, it.Value()) // the primary entry itself
			if err != nil {
				return err
			}
			if ok {
				pass, err := r.passes(s, nil, d)
				if err != nil {
					return err
				}
				if pass {
					more = r.give(d, pos)
				}
			}
		}
		heads[best] = it.Next()
	}
	if more && len(pending) > 0 {
		if _, err := r.lookups(pending); err != nil {
			return err
		}
	}
	for _, it := range its {
		if it != nil {
			if err := it.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// heaped reads every entry of the streams and keeps the page's: the first
// Limit after the cursor in the query's order.
func (r *runner) heaped(ctx context.Context, ss []stream) error {
	h := &pageHeap{o: r.q.Order, n: r.q.Limit, in: map[string]bool{}}
	for i := range ss {
		s := &ss[i]
		if s.hi != nil && bytes.Compare(s.lo, s.hi) >= 0 {
			continue
		}
		it, err := r.kv.NewIter(s.lo, s.hi)
		if err != nil {
			return err
		}
		for it.Next() {
			if err := ctx.Err(); err != nil {
				it.Close()
				return err
			}
			d, ok, err := r.fetch(s, it.Key(), it.Value())
			if err == nil && ok {
				ok, err = r.passes(s, it.Value(), d)
			}
			if err != nil {
				it.Close()
				return err
			}
			if !ok {
				continue
			}
			p := position(r.q.Order, d)
			if d.bad != nil {
				it.Close()
				return d.bad
			}
			if r.after != nil && !before(r.q.Order, r.after, p) || !h.wants(p) {
				continue
			}
			h.offer(p, r.keep(d))
		}
		if err := errors.Join(it.Err(), it.Close()); err != nil {
			return err
		}
	}
	pos, docs := h.sorted()
	for i, d := range docs {
		if !r.give(d, pos[i]) {
			break
		}
	}
	return nil
}

// keep returns a copy of a doc read from an iterator (its bytes the
// iterator's, the doc itself reused) that outlives both.
func (r *runner) keep(d *doc) *doc {
	c := r.arena.doc(r.q.Limit)
	*c = *d
	b := r.arena.bytes(r.q.Limit, d.created, d.json, d.raw[0], d.raw[1], d.raw[2])
	c.created, b = b[:len(d.created):len(d.created)], b[len(d.created):]
	c.json, b = b[:len(d.json):len(d.json)], b[len(d.json):]
	for i, t := range d.raw {
		c.raw[i], b = b[:len(t):len(t)], b[len(t):]
	}
	return c
}
