package index

import (
	"bytes"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// doc is a record's readable current version as a query reads it.
type doc struct {
	space, collection, key, id string
	created                    []byte // encoded @createdAt (appendCreated)
	createdBy                  string // "" when not known
	json                       []byte // the version's canonical JSON
	// raw holds key, id and createdBy as bytes until texts makes the
	// strings: a page handed out as it is read needs none of them.
	raw  [3][]byte
	lazy bool
	// bad is why json did not parse, when a filter needed its content.
	bad error
	// content is what a filter reads of the version besides the above;
	// nil until read (only filters on bodies, links and tags need it).
	*content
}

// content is a version's body, links and tags.
type content struct {
	body    any
	hasBody bool
	links   []record.Link
	tags    []string
	v       *record.Version // the version, when the doc was made from one
}

// texts makes key, id and createdBy from raw, once (one allocation).
func (d *doc) texts() {
	if !d.lazy {
		return
	}
	k, i, b := d.raw[0], d.raw[1], d.raw[2]
	t := string(append(append(append(make([]byte, 0, len(k)+len(i)+len(b)), k...), i...), b...))
	d.key, d.id, d.createdBy = t[:len(k)], t[len(k):len(k)+len(i)], t[len(k)+len(i):]
	d.lazy = false
}

// createdAt is @createdAt in Unix milliseconds.
func (d *doc) createdAt() (int64, bool) { return decodeCreated(d.created) }

// get returns a single-valued attribute's value, and whether the record
// has it.
func (d *doc) get(a attr) (any, bool) {
	d.texts()
	switch a.kind {
	case attrKey:
		return d.key, true
	case attrCollection:
		return d.collection, true
	case attrCreatedBy:
		return d.createdBy, d.createdBy != ""
	case attrCreatedAt:
		ms, ok := d.createdAt()
		return float64(ms), ok
	case attrField:
		d.load()
		if !d.hasBody {
			return nil, false
		}
		v := d.body
		for _, s := range a.path {
			o, ok := v.(*canonical.Object)
			if !ok {
				return nil, false
			}
			if v, ok = o.Get(s); !ok {
				return nil, false
			}
		}
		return v, true
	}
	return nil, false
}

// set returns a set-valued attribute's members: the keys its links of the
// role point at, or its tags.
func (d *doc) set(a attr) []string {
	d.load()
	if a.kind == attrTags {
		return d.tags
	}
	var out []string
	for _, l := range d.links {
		if l.Rel == a.rel {
			out = append(out, l.To)
		}
	}
	return out
}

// match reports whether d passes the filter n (nil passes everything).
func match(n *node, d *doc) bool {
	if n == nil {
		return true
	}
	switch n.kind {
	case nodeAnd:
		for _, k := range n.kids {
			if !match(k, d) {
				return false
			}
		}
		return true
	case nodeOr:
		for _, k := range n.kids {
			if match(k, d) {
				return true
			}
		}
		return false
	case nodeNot:
		return !match(n.kids[0], d)
	}
	if n.attr.multi() {
		return matchSet(n, d.set(n.attr))
	}
	v, ok := d.get(n.attr)
	return matchValue(n, v, ok)
}

// matchValue is a condition on a single value (present or not).
func matchValue(n *node, v any, present bool) bool {
	switch n.op {
	case opExists:
		return present == n.val.(bool)
	case opEq:
		return present && canonical.Equal(v, n.val)
	case opNe:
		return !(present && canonical.Equal(v, n.val))
	case opIn, opNin:
		in := false
		if present {
			for _, x := range n.val.([]any) {
				if canonical.Equal(v, x) {
					in = true
					break
				}
			}
		}
		return in == (n.op == opIn)
	case opContains:
		if !present {
			return false
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if canonical.Equal(e, n.val) {
					return true
				}
			}
		case string:
			s, ok := n.val.(string)
			return ok && strings.Contains(x, s)
		}
		return false
	}
	if !present {
		return false
	}
	c, ok := canonical.Compare(v, n.val)
	if !ok {
		return false
	}
	switch n.op {
	case opGt:
		return c > 0
	case opGte:
		return c >= 0
	case opLt:
		return c < 0
	}
	return c <= 0 // opLte
}

// matchSet is a condition on a set of strings: it holds of the set when it
// holds of a member ($eq, $contains, $in), and $ne and $nin are their
// negations.
func matchSet(n *node, set []string) bool {
	has := func(x any) bool {
		s, ok := x.(string)
		if !ok {
			return false
		}
		for _, m := range set {
			if m == s {
				return true
			}
		}
		return false
	}
	switch n.op {
	case opExists:
		return (len(set) > 0) == n.val.(bool)
	case opEq, opContains:
		return has(n.val)
	case opNe:
		return !has(n.val)
	case opIn, opNin:
		in := false
		for _, x := range n.val.([]any) {
			if has(x) {
				in = true
				break
			}
		}
		return in == (n.op == opIn)
	}
	return false
}

// position is d's place in an order: the bytes its entries sort by
// (docs/queries.md, "Order"), ascending.
func position(o Order, d *doc) []byte {
	d.texts()
	switch o.attr.kind {
	case attrKey:
		return append([]byte(d.key), 0)
	case attrCreatedAt:
		return appendSuffix(nil, d.created, d.key)
	}
	v, ok := d.get(o.attr)
	return appendSuffix(appendValue(nil, v, ok), d.created, d.key)
}

// before reports whether position a comes before b in o's direction.
func before(o Order, a, b []byte) bool {
	c := bytes.Compare(a, b)
	if o.Desc {
		return c > 0
	}
	return c < 0
}
