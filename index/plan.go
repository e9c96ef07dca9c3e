package index

import (
	"bytes"
	"slices"

	"github.com/minca-go/minca/engine"
)

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
