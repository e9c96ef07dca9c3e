package identity

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/minca-go/minca/canonical"
)

// MaxSelectorLen bounds a selector's text, in bytes: far above any path into
// a version's arguments, and small enough that parsing one is cheap.
const MaxSelectorLen = 1024

// Selector is a parsed UCAN 1.0 policy selector (UCAN Delegation, Selectors):
// a jq-like path into an invocation's arguments. What it accepts:
//
//	.                 the whole value
//	.name             a member; name is [A-Za-z_][A-Za-z0-9_]*
//	["any name"]      a member by any name, a JSON string (also .["…"])
//	[2] [-1]          a list element, from the end when negative
//	[1:3] [2:] [:-1]  a slice of a list, clamped to its bounds
//	[]                a list itself, or an object's values in canonical order
//	…?                after any segment: null where it would not resolve
//
// It must start with one dot and has no "..". Resolving stops at the first
// segment that does not resolve and is not optional, even if a later one
// is (UCAN: "MUST return early").
type Selector struct {
	text string
	segs []segment
}

type segKind uint8

const (
	segField  segKind = iota // .name, ["name"]
	segIndex                 // [n]
	segSlice                 // [lo:hi]
	segValues                // []
)

type segment struct {
	kind         segKind
	optional     bool
	field        string
	index        int
	lo, hi       int
	hasLo, hasHi bool
}

// ParseSelector parses a selector, refusing with an error that says where
// and why anything UCAN 1.0 does not allow.
func ParseSelector(s string) (*Selector, error) {
	if s == "" {
		return nil, errors.New("an empty selector; the whole value is \".\"")
	}
	if len(s) > MaxSelectorLen {
		return nil, fmt.Errorf("a selector of %d bytes; at most %d", len(s), MaxSelectorLen)
	}
	if s[0] != '.' {
		return nil, fmt.Errorf("selector %q does not start with \".\"", s)
	}
	sel := &Selector{text: s}
	i := 1
	for i < len(s) && s[i] == '?' { // ".?": the identity never fails
		i++
	}
	if i == len(s) {
		return sel, nil
	}
	if i > 1 {
		return nil, fmt.Errorf("selector %q: \"?\" at byte 1 follows no segment", s)
	}
	afterDot := true
	for i < len(s) {
		var seg segment
		var err error
		switch c := s[i]; {
		case c == '.' && !afterDot:
			afterDot = true
			i++
			continue
		case c == '[':
			seg, i, err = parseBracket(s, i)
		case afterDot && isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			seg, i = segment{kind: segField, field: s[i:j]}, j
		case c == '.':
			return nil, fmt.Errorf("selector %q: \"..\" at byte %d; recursive descent is not allowed", s, i-1)
		case afterDot:
			return nil, fmt.Errorf("selector %q: byte %d: a dot is followed by a name ([A-Za-z_][A-Za-z0-9_]*) or \"[\"; quote other names as [\"…\"]", s, i)
		default:
			return nil, fmt.Errorf("selector %q: unexpected %q at byte %d", s, c, i)
		}
		if err != nil {
			return nil, fmt.Errorf("selector %q: %w", s, err)
		}
		afterDot = false
		for i < len(s) && s[i] == '?' { // repeated optionals are one
			seg.optional = true
			i++
		}
		sel.segs = append(sel.segs, seg)
	}
	if afterDot {
		return nil, fmt.Errorf("selector %q ends with a dot", s)
	}
	return sel, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || ('0' <= c && c <= '9') }

// parseBracket reads the segment in brackets at s[i] == '['.
func parseBracket(s string, i int) (segment, int, error) {
	start := i
	i++
	if i < len(s) && s[i] == '"' {
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return segment{}, 0, fmt.Errorf("byte %d: a quoted name is not closed", start)
		}
		v, err := canonical.Parse([]byte(s[i : j+1]))
		if err != nil {
			return segment{}, 0, fmt.Errorf("byte %d: the quoted name is not a JSON string: %v", start, err)
		}
		if j+1 >= len(s) || s[j+1] != ']' {
			return segment{}, 0, fmt.Errorf("byte %d: a quoted name is followed by \"]\"", start)
		}
		return segment{kind: segField, field: v.(string)}, j + 2, nil
	}
	j := i
	for j < len(s) && s[j] != ']' {
		j++
	}
	if j >= len(s) {
		return segment{}, 0, fmt.Errorf("byte %d: \"[\" is not closed", start)
	}
	inner, next := s[i:j], j+1
	if inner == "" {
		return segment{kind: segValues}, next, nil
	}
	lo, hi, isSlice := cut(inner, ':')
	if !isSlice {
		n, ok := parseInt(inner)
		if !ok {
			return segment{}, 0, fmt.Errorf("byte %d: %q is not an index, a slice or a quoted name", start, s[start:next])
		}
		return segment{kind: segIndex, index: n}, next, nil
	}
	seg := segment{kind: segSlice}
	var ok bool
	if lo != "" {
		if seg.lo, ok = parseInt(lo); !ok {
			return segment{}, 0, fmt.Errorf("byte %d: %q: the slice's start is not an integer", start, s[start:next])
		}
		seg.hasLo = true
	}
	if hi != "" {
		if seg.hi, ok = parseInt(hi); !ok {
			return segment{}, 0, fmt.Errorf("byte %d: %q: the slice's end is not an integer", start, s[start:next])
		}
		seg.hasHi = true
	}
	if !seg.hasLo && !seg.hasHi {
		return segment{}, 0, fmt.Errorf("byte %d: a slice names its start, its end or both", start)
	}
	return seg, next, nil
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// parseInt reads -?(0|[1-9][0-9]{0,8}): indexes are small, and one text
// per number keeps selectors comparable.
func parseInt(s string) (int, bool) {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if d == "" || len(d) > 9 || (d[0] == '0' && len(d) > 1) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && s != "-0"
}

// String returns the selector as written.
func (s *Selector) String() string { return s.text }

// Select resolves the selector in v, a value of canonical's model. ok is
// false when it does not resolve: a member that is missing, an index out of
// range, a step into the wrong kind of value, none of them optional.
// Values returned share memory with v.
func (s *Selector) Select(v any) (out any, ok bool) {
	cur := v
	for i := range s.segs {
		seg := &s.segs[i]
		next, ok := seg.apply(cur)
		if !ok {
			if !seg.optional {
				return nil, false
			}
			next = nil
		}
		cur = next
	}
	return cur, true
}

func (seg *segment) apply(cur any) (any, bool) {
	switch seg.kind {
	case segField:
		o, isObj := cur.(*canonical.Object)
		if !isObj {
			return nil, false
		}
		return o.Get(seg.field)
	case segIndex:
		l, isList := cur.([]any)
		if !isList {
			return nil, false
		}
		i := seg.index
		if i < 0 {
			i += len(l)
		}
		if i < 0 || i >= len(l) {
			return nil, false
		}
		return l[i], true
	case segSlice:
		l, isList := cur.([]any)
		if !isList {
			return nil, false
		}
		lo, hi := 0, len(l)
		if seg.hasLo {
			lo = clampIndex(seg.lo, len(l))
		}
		if seg.hasHi {
			hi = clampIndex(seg.hi, len(l))
		}
		if lo > hi {
			lo = hi
		}
		return l[lo:hi:hi], true
	case segValues:
		return collectionValues(cur)
	}
	return nil, false
}

func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

// collectionValues is a list itself, or an object's member values in the
// canonical order of their names (02 §1), so every peer sees one order
// whatever order a copy's members came in.
func collectionValues(v any) ([]any, bool) {
	switch c := v.(type) {
	case []any:
		return c, true
	case *canonical.Object:
		if c == nil {
			return nil, false
		}
		members := append([]canonical.Member(nil), c.Members...)
		sort.Slice(members, func(i, j int) bool {
			return canonical.CompareUTF16(members[i].Name, members[j].Name) < 0
		})
		out := make([]any, len(members))
		for i, m := range members {
			out[i] = m.Value
		}
		return out, true
	}
	return nil, false
}
