package index

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/minca-go/minca/engine"
)

// Entry is one record in a query's result: its readable current version
// (02 §9.5) with what the index knows of its creation.
type Entry struct {
	Key string
	ID  string
	// CreatedAt and CreatedBy are @createdAt and @createdBy (zero and ""
	// when not known: the record's first version is not held, or its
	// createdAt does not parse).
	CreatedAt time.Time
	CreatedBy string
	// JSON is the version as canonical JSON, whole (what
	// engine.Store.CurrentJSON returns). It belongs to the caller.
	JSON []byte
}

func (d *doc) entry() Entry {
	d.texts()
	e := Entry{Key: d.key, ID: d.id, CreatedBy: d.createdBy, JSON: d.json}
	if ms, ok := d.createdAt(); ok {
		e.CreatedAt = time.UnixMilli(ms).UTC()
	}
	if e.JSON == nil && d.content != nil && d.v != nil {
		e.JSON, _ = d.v.MarshalJSON()
	}
	return e
}

// Page is a page of a query's result, in the query's order.
type Page struct {
	Entries []Entry
	// Next is the cursor of the page after this one, when this one is
	// full (it may be empty); "" when this page is the last.
	Next string
}

// Find answers a query in one space: the first page after q.Cursor of
// the records whose readable current version (02 §9.5) is in
// q.Collection, is not a delete, and passes q's filter, with "$me" standing
// for account. docs/queries.md says what each operator means and how
// entries are ordered. Each record is read as of a whole batch; a batch
// committing while a page is read may be seen in part of it.
func (ix *Index) Find(ctx context.Context, space string, q *Query, account string) (Page, error) {
	p := Page{Entries: make([]Entry, 0, min(q.Limit, 128))}
	next, err := ix.scan(ctx, space, q, account, func(d *doc) bool {
		e := d.entry()
		// One small allocation each, of the exact size: no large block
		// to clear and to fault in, page after page.
		e.JSON = bytes.Clone(e.JSON)
		p.Entries = append(p.Entries, e)
		return true
	})
	p.Next = next
	return p, err
}

// Scan is [Index.Find] handing each entry to fn as it is read, in order,
// instead of gathering a page: a server writes a page out from there
// without copying it. What fn is given is valid only during the call. fn
// returns false to stop: the page then ends there, with no next. It
// returns the page's next.
func (ix *Index) Scan(ctx context.Context, space string, q *Query, account string, fn func(Row) bool) (next string, err error) {
	return ix.scan(ctx, space, q, account, func(d *doc) bool { return fn(Row{d}) })
}

// Row is an entry of a page as [Index.Scan] hands it out: valid only
// during the call.
type Row struct{ d *doc }

// JSON is the version as canonical JSON, valid only during the call.
func (r Row) JSON() []byte { return r.d.json }

// Entry is the entry; its JSON too is valid only during the call.
func (r Row) Entry() Entry { return r.d.entry() }

// scan runs a page, handing each entry to emit.
func (ix *Index) scan(ctx context.Context, space string, q *Query, account string, emit func(*doc) bool) (string, error) {
	st, err := ix.store()
	if err != nil {
		return "", err
	}
	if space == "" {
		return "", refuse(CodeSpace, "", "a query is answered in one space, and none was named")
	}
	b, err := q.bind(account)
	if err != nil {
		return "", err
	}
	var after []byte
	if q.Cursor != "" {
		fp, pos, err := decodeCursor(q.Cursor)
		if err != nil {
			return "", refuse(CodeCursor, "cursor", err.Error())
		}
		if fp != b.fp {
			return "", refuse(CodeCursorQuery, "cursor", "the cursor is of another query (its collection, where, order or account differ)")
		}
		after = pos
	}
	kv := st.IndexReader()
	g, ok := kv.(manyGetter)
	if !ok {
		return "", errors.New("minca/index: the store's index reader cannot look keys up in a sorted run")
	}
	r := &runner{ix: ix, kv: kv, g: g, space: space, q: b, after: after, emit: emit}
	if err := r.run(ctx); err != nil {
		return "", err
	}
	if r.n < q.Limit || r.stopped {
		return "", nil
	}
	return encodeCursor(b.fp, r.last), nil
}

// runner answers one page.
type runner struct {
	ix *Index
	kv engine.Reader
	g  manyGetter // kv's sorted look-ups
	// rest is the filter but for the condition the streams read only the
	// records of (a point condition); an entry of those streams whose
	// version is still the record's is matched against rest alone.
	rest    *node
	space   string
	q       *bound
	after   []byte // the cursor's position; nil for the first page
	place   []byte // the space's and collection's part of keys (placeOf)
	pp      []byte // the collection's primary prefix
	arena   arena
	scratch doc
	// emit takes each entry of the page in order; a doc's bytes may be
	// the iterator's, valid only during the call.
	emit    func(*doc) bool
	n       int    // entries emitted
	last    []byte // the position of the last entry emitted
	stopped bool   // emit returned false
}

// give emits d at position pos; false when the page is done.
func (r *runner) give(d *doc, pos []byte) bool {
	r.n++
	if r.n == r.q.Limit { // the page is full: its next starts after pos
		r.last = append(r.last[:0], pos...)
	}
	if !r.emit(d) {
		r.stopped = true
		return false
	}
	return r.n < r.q.Limit
}

// stream is one range of an index table whose keys, past base bytes, are
// positions in the order of what spc says.
type stream struct {
	table  byte
	lo, hi []byte
	base   int
	spc    attr
}

func (r *runner) prefix(table byte) []byte { return withTable(table, r.place) }

var (
	createdAttr = attr{kind: attrCreatedAt, name: "@createdAt"}
	keyAttr     = attr{kind: attrKey, name: "@key"}
)

// plan picks the streams a page reads, and whether their positions are
// the query's order (then they are merged and read only as far as the
// page needs — backwards for a descending order, when the store can;
// else every candidate is read and the page's entries kept by a bounded
// heap).
//
// A condition on an indexed attribute that only some values pass — @key,
// link:<rel>, @createdBy or @tags with $eq, $in or $contains, a declared
// field with $eq or $in — among the filter's top-level conditions
// narrows the read to those values' entries; without one, the order's
// index is read (the primary for @createdAt, the locators for @key, a
// declared field's entries), or all the primary entries.
func (r *runner) plan() (ss []stream, ordered bool) {
	conj := conjuncts(r.q.where, nil)
	o := r.q.Order.attr
	ss = r.points(conj)
	if ss == nil {
		switch {
		case o.kind == attrKey:
			ss = []stream{r.whole(tLocator, nil, o)}
		case o.kind == attrField && r.declared(o) != nil:
			ss = []stream{r.whole(tField, r.declared(o).tag, o)}
		default:
			ss = []stream{r.whole(tPrimary, nil, createdAttr)}
		}
	}
	_, backwards := r.kv.(engine.ReverseReader)
	ordered = !r.q.Order.Desc || backwards
	for i := range ss {
		lo, hi := boundsOf(conj, ss[i].spc)
		ss[i].narrow(lo, hi)
		if !sameSpace(ss[i].spc, o) {
			ordered = false
		}
	}
	if ordered && r.after != nil {
		for i := range ss {
			if r.q.Order.Desc {
				ss[i].narrow(nil, r.after)
			} else {
				ss[i].narrow(append(slices.Clone(r.after), 0), nil)
			}
		}
	}
	return ss, ordered
}

func sameSpace(a, b attr) bool { return a.kind == b.kind && a.name == b.name }

// whole is a stream over a table's entries of the collection (with
// extra after its prefix).
func (r *runner) whole(table byte, extra []byte, spc attr) stream {
	p := append(r.prefix(table), extra...)
	return stream{table: table, lo: p, hi: prefixEnd(p), base: len(p), spc: spc}
}

// narrow limits a stream to positions in [lo, hi) (nil: open).
func (s *stream) narrow(lo, hi []byte) {
	base := s.lo[:s.base:s.base]
	if lo != nil {
		if l := cat(base, lo); bytes.Compare(l, s.lo) > 0 {
			s.lo = l
		}
	}
	if hi != nil {
		if h := cat(base, hi); s.hi == nil || bytes.Compare(h, s.hi) < 0 {
			s.hi = h
		}
	}
}

func (r *runner) declared(a attr) *declared {
	for i, f := range r.ix.fields[r.q.Collection] {
		if f.attr.name == a.name {
			return &r.ix.fields[r.q.Collection][i]
		}
	}
	return nil
}

// conjuncts lists the conditions every passing record meets: the
// filter's top-level conditions, through $and.
func conjuncts(n *node, out []*node) []*node {
	if n == nil {
		return out
	}
	switch n.kind {
	case nodeCond:
		return append(out, n)
	case nodeAnd:
		for _, k := range n.kids {
			out = conjuncts(k, out)
		}
	}
	return out
}

// points returns the streams of the top-level condition on an indexed
// attribute that only some values pass, or nil; of several, one on @key,
// else link:<rel>, @createdBy, @tags, a declared field, in that order.
func (r *runner) points(conj []*node) []stream {
	rank := func(n *node) int {
		switch {
		case n.attr.kind == attrKey && (n.op == opEq || n.op == opIn):
			return 1
		case n.attr.kind == attrLink && (n.op == opEq || n.op == opIn || n.op == opContains):
			return 2
		case n.attr.kind == attrCreatedBy && (n.op == opEq || n.op == opIn):
			return 3
		case n.attr.kind == attrTags && (n.op == opEq || n.op == opIn || n.op == opContains):
			return 4
		case n.attr.kind == attrField && (n.op == opEq || n.op == opIn) && r.declared(n.attr) != nil:
			return 5
		}
		return 0
	}
	var best *node
	for _, n := range conj {
		if k := rank(n); k > 0 && (best == nil || k < rank(best)) {
			best = n
		}
	}
	if best == nil {
		return nil
	}
	r.rest = without(r.q.where, best)
	vals := []any{best.val}
	if best.op == opIn {
		vals = best.val.([]any)
	}
	ss := []stream{} // not nil: no value passes, nothing to read
	o := r.q.Order.attr
	created := createdAttr
	for _, v := range vals {
		if best.attr.kind == attrField {
			f := r.declared(best.attr)
			e := appendValue(nil, v, true)
			if valueCut(v) { // its entries stand for other values too
				r.rest = r.q.where
			}
			if sameSpace(o, best.attr) { // positions are the value's then the suffix
				s := r.whole(tField, f.tag, best.attr)
				s.narrow(e, prefixEnd(e))
				ss = append(ss, s)
			} else {
				ss = append(ss, r.whole(tField, cat(f.tag, e), created))
			}
			continue
		}
		s, ok := v.(string)
		if !ok {
			continue // only strings are keys, creators, link targets and tags
		}
		switch best.attr.kind {
		case attrKey:
			if !keyLike(s) {
				continue
			}
			st := r.whole(tLocator, nil, keyAttr)
			e := append([]byte(s), 0)
			st.narrow(e, prefixEnd(e))
			ss = append(ss, st)
		case attrLink:
			ss = append(ss, r.whole(tBacklink, cat(appendEsc(nil, best.attr.rel), appendEsc(nil, s)), created))
		case attrCreatedBy:
			ss = append(ss, r.whole(tCreator, appendEsc(nil, s), created))
		case attrTags:
			ss = append(ss, r.whole(tTag, appendEsc(nil, s), created))
		}
	}
	return ss
}

// without is the filter n with the condition c (a top-level one) taken
// out.
func without(n, c *node) *node {
	if n == c {
		return &node{kind: nodeAnd}
	}
	if n == nil || n.kind != nodeAnd {
		return n
	}
	out := *n
	out.kids = make([]*node, len(n.kids))
	for i, k := range n.kids {
		out.kids[i] = without(k, c)
	}
	return &out
}

// passes matches d, read through an entry of stream s holding tag, against
// the filter: against rest alone when s is a point condition's stream and
// d is the version the entry was written for (a locator's record is its
// key's, whatever its version). Its error is a version that does not
// parse.
func (r *runner) passes(s *stream, tag []byte, d *doc) (bool, error) {
	f := r.q.where
	if r.rest != nil && s.table != tPrimary && (s.table == tLocator || bytes.Equal(tag, d.tagOf())) {
		f = r.rest
	}
	ok := match(f, d)
	return ok, d.bad
}

// keyLike reports whether s could be a record key's text in a position:
// no 0x00 (02 §4.1 keys have none).
func keyLike(s string) bool { return s != "" && len(s) <= 255 && !bytes.ContainsRune([]byte(s), 0) }

// boundsOf narrows the positions of what spc orders by, from the
// top-level conditions on it: [lo, hi), nil where open. Bounds only ever
// let more through than the conditions (each entry read is still matched
// against the whole filter).
func boundsOf(conj []*node, spc attr) (lo, hi []byte) {
	up := func(l, h []byte) {
		if l != nil && (lo == nil || bytes.Compare(l, lo) > 0) {
			lo = l
		}
		if h != nil && (hi == nil || bytes.Compare(h, hi) < 0) {
			hi = h
		}
	}
	for _, n := range conj {
		if !sameSpace(n.attr, spc) {
			continue
		}
		if n.op == opExists {
			if spc.kind == attrField {
				if n.val.(bool) {
					up([]byte{rankNull}, nil)
				} else {
					up([]byte{rankAbsent}, []byte{rankAbsent + 1})
				}
			} else if spc.kind == attrCreatedAt && n.val.(bool) {
				up([]byte{1}, nil)
			}
			continue
		}
		enc := func(v any) ([]byte, bool) {
			switch spc.kind {
			case attrCreatedAt:
				f, ok := v.(float64)
				return appendCreated(nil, int64(f), true), ok
			case attrKey:
				s, ok := v.(string)
				return append([]byte(s), 0), ok && keyLike(s)
			}
			if valueCut(v) {
				return nil, false
			}
			return appendValue(nil, v, true), true
		}
		// typeRange: a field's range operators only pass values of the
		// operand's type.
		typeRange := func(e []byte) ([]byte, []byte) {
			if spc.kind != attrField {
				return nil, nil
			}
			return e[:1], []byte{e[0] + 1}
		}
		switch n.op {
		case opEq:
			if e, ok := enc(n.val); ok {
				up(e, prefixEnd(e))
			}
		case opIn:
			var l, h []byte
			ok := true
			for _, v := range n.val.([]any) {
				e, good := enc(v)
				if !good {
					ok = false
					break
				}
				if l == nil || bytes.Compare(e, l) < 0 {
					l = e
				}
				if pe := prefixEnd(e); h == nil || bytes.Compare(pe, h) > 0 {
					h = pe
				}
			}
			if ok && l != nil {
				up(l, h)
			}
		case opGt, opGte, opLt, opLte:
			e, ok := enc(n.val)
			if !ok {
				continue
			}
			tl, th := typeRange(e)
			switch n.op {
			case opGt:
				up(prefixEnd(e), th)
			case opGte:
				up(e, th)
			case opLt:
				up(tl, e)
			case opLte:
				up(tl, prefixEnd(e))
			}
		}
	}
	return lo, hi
}

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

// arena hands out the docs a page keeps and their bytes from a few large
// allocations, not several a doc.
type arena struct {
	buf  []byte
	docs []doc
}

// bytes returns a copy of the parts, together, from the arena; an
// allocation has room for about want of them.
func (a *arena) bytes(want int, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, min(want*n*5/4, 1<<20)))
	}
	start := len(a.buf)
	for _, p := range parts {
		a.buf = append(a.buf, p...)
	}
	return a.buf[start:len(a.buf):len(a.buf)]
}

func (a *arena) doc(want int) *doc {
	if len(a.docs) == cap(a.docs) {
		a.docs = make([]doc, 0, min(max(want, 8), 128))
	}
	a.docs = a.docs[:len(a.docs)+1]
	return &a.docs[len(a.docs)-1]
}

// pageHeap keeps the n first candidates in an order: a max-heap by it
// (the worst kept on top), with the positions held, to drop a record read
// twice.
type pageHeap struct {
	o    Order
	n    int
	pos  [][]byte
	docs []*doc
	in   map[string]bool
}

func (h *pageHeap) worse(i, j int) bool { return before(h.o, h.pos[j], h.pos[i]) }

func (h *pageHeap) swap(i, j int) {
	h.pos[i], h.pos[j] = h.pos[j], h.pos[i]
	h.docs[i], h.docs[j] = h.docs[j], h.docs[i]
}

// wants reports whether a candidate at p would be kept.
func (h *pageHeap) wants(p []byte) bool {
	return !h.in[string(p)] && (len(h.pos) < h.n || before(h.o, p, h.pos[0]))
}

// offer keeps d at p if the heap wants it.
func (h *pageHeap) offer(p []byte, d *doc) {
	if !h.wants(p) {
		return
	}
	if len(h.pos) == h.n {
		delete(h.in, string(h.pos[0]))
		h.pos[0], h.docs[0] = p, d
		h.down(0)
	} else {
		h.pos, h.docs = append(h.pos, p), append(h.docs, d)
		for i := len(h.pos) - 1; i > 0; {
			up := (i - 1) / 2
			if !h.worse(i, up) {
				break
			}
			h.swap(i, up)
			i = up
		}
	}
	h.in[string(p)] = true
}

func (h *pageHeap) down(i int) {
	for {
		w := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h.pos) && h.worse(c, w) {
				w = c
			}
		}
		if w == i {
			return
		}
		h.swap(i, w)
		i = w
	}
}

// sorted returns the kept positions and docs in order.
func (h *pageHeap) sorted() ([][]byte, []*doc) {
	idx := make([]int, len(h.pos))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if before(h.o, h.pos[a], h.pos[b]) {
			return -1
		}
		if before(h.o, h.pos[b], h.pos[a]) {
			return 1
		}
		return 0
	})
	pos, out := make([][]byte, len(idx)), make([]*doc, len(idx))
	for i, j := range idx {
		pos[i], out[i] = h.pos[j], h.docs[j]
	}
	return pos, out
}
