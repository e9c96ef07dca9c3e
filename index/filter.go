package index

import (
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// attrKind is what a condition reads of a record (06 §2.11).
type attrKind uint8

const (
	attrField      attrKind = iota // a body field path
	attrLink                       // link:<rel>: the keys its links of that role point at
	attrKey                        // @key
	attrCollection                 // @collection
	attrCreatedBy                  // @createdBy: the root of the record's first version
	attrCreatedAt                  // @createdAt: when the record's first version was made
	attrTags                       // @tags: the blind tags (02 §8), an extension
)

// attr is one thing a condition or an order reads.
type attr struct {
	kind attrKind
	name string   // as written: "a.b", "link:about", "@key"
	path []string // attrField: its segments
	rel  string   // attrLink: the role
}

// multi reports whether the attribute is a set of strings (links, tags),
// matched when any of its members is.
func (a attr) multi() bool { return a.kind == attrLink || a.kind == attrTags }

// op is a comparison operator.
type op uint8

const (
	opEq op = iota
	opNe
	opGt
	opGte
	opLt
	opLte
	opIn
	opNin
	opExists
	opContains
)

var opNames = map[string]op{"$eq": opEq, "$ne": opNe, "$gt": opGt, "$gte": opGte, "$lt": opLt, "$lte": opLte,
	"$in": opIn, "$nin": opNin, "$exists": opExists, "$contains": opContains}

func (o op) ranged() bool { return o >= opGt && o <= opLte }

// nodeKind is what a filter node is.
type nodeKind uint8

const (
	nodeAnd  nodeKind = iota // every kid holds (a filter object's members, $and)
	nodeOr                   // some kid holds ($or)
	nodeNot                  // its one kid does not hold ($not)
	nodeCond                 // a condition on an attribute
)

// node is a parsed filter.
type node struct {
	kind nodeKind
	kids []*node
	attr attr
	op   op
	// val is the operand: a value of canonical's model ($in, $nin: a
	// []any); @createdAt's are numbers of Unix milliseconds; $exists's a
	// bool.
	val any
}

// Limits on a query's shape (docs/queries.md, "Limits").
const (
	MaxQueryBytes = 64 << 10 // the query's JSON text
	MaxDepth      = 16       // filters nested (06 §2.11: "nested at most 16 deep")
	MaxConditions = 256      // conditions in one query
	MaxList       = 256      // entries of $in, $nin, $and, $or
	MaxPathParts  = 8        // segments of a body field path
	MaxLimit      = 1000     // a page's limit
	DefaultLimit  = 100
)

// me is the operand string that stands for the account (06 §2.11).
const me = "$me"

type filterParser struct {
	conds    int
	hasMe    bool
	proposal bool // 06 §2.11's attributes only: no @tags
}

// filter parses a filter object at path, nested depth deep (where is 1).
func (p *filterParser) filter(v any, path string, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, refuse(CodeDepth, path, "filters nest at most 16 deep (06 §2.11)")
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeType, path, "a filter is an object, not "+describe(v))
	}
	n := &node{kind: nodeAnd}
	for _, m := range o.Members {
		at := member(path, m.Name)
		switch {
		case m.Name == "$and" || m.Name == "$or":
			list, ok := m.Value.([]any)
			if !ok {
				return nil, refuse(CodeType, at, m.Name+" is a list of filters, not "+describe(m.Value))
			}
			if len(list) == 0 {
				return nil, refuse(CodeEmpty, at, m.Name+" needs at least one filter")
			}
			if len(list) > MaxList {
				return nil, refuse(CodeBounds, at, "at most 256 filters in "+m.Name)
			}
			k := &node{kind: nodeAnd}
			if m.Name == "$or" {
				k.kind = nodeOr
			}
			for i, f := range list {
				sub, err := p.filter(f, entry(at, i), depth+1)
				if err != nil {
					return nil, err
				}
				k.kids = append(k.kids, sub)
			}
			n.kids = append(n.kids, k)
		case m.Name == "$not":
			sub, err := p.filter(m.Value, at, depth+1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, &node{kind: nodeNot, kids: []*node{sub}})
		case strings.HasPrefix(m.Name, "$"):
			return nil, refuse(CodeOperator, at, "a filter's members are fields, link:<rel>, @attributes, $and, $or and $not; "+m.Name+" is none")
		default:
			a, err := parseAttr(m.Name, at)
			if err != nil {
				return nil, err
			}
			if p.proposal && a.kind == attrTags {
				return nil, refuse(CodeProposal, at, "a proposal's where names body fields, link:<rel>, @key, @collection, @createdBy or @createdAt (06 §2.11)")
			}
			conds, err := p.conditions(a, m.Value, at)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, conds...)
		}
	}
	return n, nil
}

// parseAttr reads a filter member's name.
func parseAttr(name, at string) (attr, error) {
	a := attr{name: name}
	switch {
	case name == "@key":
		a.kind = attrKey
	case name == "@collection":
		a.kind = attrCollection
	case name == "@createdBy":
		a.kind = attrCreatedBy
	case name == "@createdAt":
		a.kind = attrCreatedAt
	case name == "@tags":
		a.kind = attrTags
	case strings.HasPrefix(name, "@"):
		return a, refuse(CodePath, at, "the @attributes are @key, @collection, @createdBy, @createdAt and @tags; "+name+" is none")
	case strings.HasPrefix(name, "link:"):
		a.kind, a.rel = attrLink, name[len("link:"):]
		if !record.ValidRel(a.rel) {
			return a, refuse(CodePath, at, "link: is followed by a link role, ^[a-z][a-zA-Z0-9]{0,63}$ (02 §5.1)")
		}
	default:
		a.kind = attrField
		a.path = strings.Split(name, ".")
		if len(a.path) > MaxPathParts {
			return a, refuse(CodePath, at, "a body field path has at most 8 segments")
		}
		for _, s := range a.path {
			if !validSegment(s) {
				return a, refuse(CodePath, at, "a body field path is segments of ^[a-zA-Z_][a-zA-Z0-9_]{0,63}$ joined by dots (02 §8.1)")
			}
		}
	}
	return a, nil
}

func validSegment(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isOperatorObject tells an operator object ({"$gt": 1}) from a value to
// equal ({"a": 1}, {}); an object mixing the two is refused.
func isOperatorObject(o *canonical.Object, at string) (bool, error) {
	ops := 0
	for _, m := range o.Members {
		if strings.HasPrefix(m.Name, "$") {
			ops++
		}
	}
	if ops > 0 && ops < len(o.Members) {
		return false, refuse(CodeMixed, at, "an object is either operators ($eq, $gt, …) or a value to equal, not both")
	}
	return ops > 0, nil
}

// conditions parses what a filter member holds: a value to equal, or an
// object of operators, each a condition.
func (p *filterParser) conditions(a attr, v any, at string) ([]*node, error) {
	o, isObj := v.(*canonical.Object)
	if isObj {
		ops, err := isOperatorObject(o, at)
		if err != nil {
			return nil, err
		}
		if ops {
			out := make([]*node, 0, len(o.Members))
			for _, m := range o.Members {
				c, err := p.condition(a, m.Name, m.Value, member(at, m.Name))
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
			return out, nil
		}
	}
	c, err := p.condition(a, "$eq", v, at)
	if err != nil {
		return nil, err
	}
	return []*node{c}, nil
}

// condition parses one operator and its operand.
func (p *filterParser) condition(a attr, name string, v any, at string) (*node, error) {
	o, ok := opNames[name]
	if !ok {
		return nil, refuse(CodeOperator, at, name+" is not an operator; they are $eq $ne $gt $gte $lt $lte $in $nin $exists $contains")
	}
	p.conds++
	if p.conds > MaxConditions {
		return nil, refuse(CodeBounds, at, "at most 256 conditions in a query")
	}
	n := &node{kind: nodeCond, attr: a, op: o}
	switch {
	case o == opExists:
		b, ok := v.(bool)
		if !ok {
			return nil, refuse(CodeOperand, at, "$exists takes true or false, not "+describe(v))
		}
		n.val = b
		return n, nil
	case o.ranged() && a.multi():
		return nil, refuse(CodeOperator, at, name+" does not apply to "+a.name+", a set of keys or tags: use $eq, $in, $contains")
	case o == opContains && a.kind == attrCreatedAt:
		return nil, refuse(CodeOperator, at, "$contains does not apply to @createdAt, a time")
	case o == opIn || o == opNin:
		list, ok := v.([]any)
		if !ok {
			return nil, refuse(CodeOperand, at, name+" takes a list, not "+describe(v))
		}
		if len(list) > MaxList {
			return nil, refuse(CodeBounds, at, "at most 256 values in "+name)
		}
		vals := make([]any, len(list))
		for i, e := range list {
			x, err := p.operand(a, e, entry(at, i), false)
			if err != nil {
				return nil, err
			}
			vals[i] = x
		}
		n.val = vals
		return n, nil
	}
	x, err := p.operand(a, v, at, o.ranged())
	if err != nil {
		return nil, err
	}
	n.val = x
	return n, nil
}

// operand checks a value compared with a: body fields take any JSON value
// (a range only a number or a string); the others strings, and @createdAt
// a time (docs/queries.md).
func (p *filterParser) operand(a attr, v any, at string, ranged bool) (any, error) {
	p.noteMe(v)
	switch a.kind {
	case attrField:
		switch v.(type) {
		case float64, string:
		default:
			if ranged {
				return nil, refuse(CodeOperand, at, "$gt, $gte, $lt and $lte compare with a number or a string, not "+describe(v))
			}
		}
		return v, nil
	case attrCreatedAt:
		switch x := v.(type) {
		case string:
			if x == me {
				return nil, refuse(CodeOperand, at, `@createdAt is a time, never "$me"`)
			}
			t, err := record.ParseTime(x)
			if err != nil {
				return nil, refuse(CodeOperand, at, "@createdAt compares with a time: "+err.Error())
			}
			return float64(t.UnixMilli()), nil
		case float64:
			if x != float64(int64(x)) || x < -record.MaxSafeInteger || x > record.MaxSafeInteger {
				return nil, refuse(CodeOperand, at, "@createdAt compares with a time, or whole Unix milliseconds")
			}
			return x, nil
		}
		return nil, refuse(CodeOperand, at, "@createdAt compares with a time such as 2026-09-26T12:00:00.000Z, not "+describe(v))
	}
	if _, ok := v.(string); !ok {
		return nil, refuse(CodeOperand, at, a.name+" compares with a string, not "+describe(v))
	}
	return v, nil
}

// noteMe records whether "$me" appears anywhere in v.
func (p *filterParser) noteMe(v any) {
	if !p.hasMe && hasMe(v) {
		p.hasMe = true
	}
}

func hasMe(v any) bool {
	switch x := v.(type) {
	case string:
		return x == me
	case []any:
		for _, e := range x {
			if hasMe(e) {
				return true
			}
		}
	case *canonical.Object:
		for _, m := range x.Members {
			if hasMe(m.Value) {
				return true
			}
		}
	}
	return false
}

// withMe returns v with every "$me" replaced by account (v when none is).
func withMe(v any, account string) any {
	switch x := v.(type) {
	case string:
		if x == me {
			return account
		}
	case []any:
		if !hasMe(x) {
			return v
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withMe(e, account)
		}
		return out
	case *canonical.Object:
		if !hasMe(x) {
			return v
		}
		out := &canonical.Object{Members: make([]canonical.Member, len(x.Members))}
		for i, m := range x.Members {
			out.Members[i] = canonical.Member{Name: m.Name, Value: withMe(m.Value, account)}
		}
		return out
	}
	return v
}

// bind returns the filter with "$me" standing for account.
func (n *node) bind(account string) *node {
	if n == nil {
		return nil
	}
	c := *n
	if n.kind == nodeCond {
		if n.attr.kind != attrCreatedAt {
			c.val = withMe(n.val, account)
		}
		return &c
	}
	c.kids = make([]*node, len(n.kids))
	for i, k := range n.kids {
		c.kids[i] = k.bind(account)
	}
	return &c
}
