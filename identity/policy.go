package identity

import (
	"fmt"
	"strings"

	"github.com/minca-go/minca/canonical"
)

// MaxPolicyDepth is how deeply a policy's statements may nest: a statement
// at the top of pol is at depth 1, and each not, and, or, all and any puts
// the statements inside it one deeper. 16 is far past any policy a home
// writes (06 §2.5 uses 2) and keeps evaluation's recursion small. A policy
// nested deeper is malformed, and grants nothing.
const MaxPolicyDepth = 16

// Policy is a parsed UCAN 1.0 policy: a list of statements over an
// invocation's arguments, every one of which must hold (UCAN Delegation,
// Policy; 01 §8 in our profile). A Policy is immutable and safe to share.
//
// Each statement evaluates to true, false or unresolved. Unresolved is what
// a statement is when a selector in it does not resolve (a missing member,
// an index out of range, .byCreator when it is not known): not is
// unresolved for it, and, or, all and any follow Kleene's three-valued
// logic (false and unresolved is false; true or unresolved is true), and a
// policy holds only when every statement is true. So a policy never holds
// because something was missing: ["not", ["==", ".byCreator", true]] does
// not hold when byCreator is unknown.
type Policy struct {
	stmts []statement
}

type opKind uint8

const (
	opEq opKind = iota
	opNe
	opLt
	opLe
	opGt
	opGe
	opLike
	opNot
	opAnd
	opOr
	opAll
	opAny
)

var opNames = map[string]opKind{
	"==": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe,
	"like": opLike, "not": opNot, "and": opAnd, "or": opOr, "all": opAll, "any": opAny,
}

type statement struct {
	op   opKind
	sel  *Selector
	val  any         // ==, != : any value; <…>= : float64
	glob []string    // like: the literal parts between wildcards
	subs []statement // not: one; and, or: any number; all, any: one
}

// ParsePolicy parses pol, the list a note carries. A malformed policy (not
// a list, an unknown operator, a wrong arity or argument type, a selector
// that does not parse, a bad like pattern, nesting past MaxPolicyDepth) is
// refused with a *NoteError, code note/policy, naming where it is wrong.
func ParsePolicy(pol any) (*Policy, error) {
	list, ok := pol.([]any)
	if !ok {
		return nil, noteErr(CodeNotePolicy, "payload.pol", "pol is a list of statements")
	}
	p := &Policy{stmts: make([]statement, len(list))}
	for i, v := range list {
		s, err := parseStatement(v, 1, fmt.Sprintf("pol[%d]", i))
		if err != nil {
			return nil, err
		}
		p.stmts[i] = s
	}
	return p, nil
}

func policyErr(at, format string, a ...any) *NoteError {
	return noteErr(CodeNotePolicy, "payload."+at, "malformed policy, which grants nothing: "+at+": "+fmt.Sprintf(format, a...))
}

func parseStatement(v any, depth int, at string) (statement, error) {
	if depth > MaxPolicyDepth {
		return statement{}, policyErr(at, "statements nest deeper than %d", MaxPolicyDepth)
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return statement{}, policyErr(at, "a statement is a list [operator, …]")
	}
	name, _ := list[0].(string)
	op, ok := opNames[name]
	if !ok {
		return statement{}, policyErr(at, "%s is not an operator of UCAN 1.0 (==, !=, <, <=, >, >=, like, not, and, or, all, any)", describe(list[0]))
	}
	want := 3
	if op == opNot || op == opAnd || op == opOr {
		want = 2
	}
	if len(list) != want {
		return statement{}, policyErr(at, "%q takes %d arguments, not %d", name, want-1, len(list)-1)
	}
	s := statement{op: op}
	if want == 3 {
		text, ok := list[1].(string)
		if !ok {
			return statement{}, policyErr(at+"[1]", "a selector is a string")
		}
		sel, err := ParseSelector(text)
		if err != nil {
			return statement{}, policyErr(at+"[1]", "%v", err)
		}
		s.sel = sel
	}
	switch op {
	case opEq, opNe:
		s.val = list[2]
	case opLt, opLe, opGt, opGe:
		f, ok := list[2].(float64)
		if !ok {
			return statement{}, policyErr(at+"[2]", "%q compares with a number", name)
		}
		s.val = f
	case opLike:
		pat, ok := list[2].(string)
		if !ok {
			return statement{}, policyErr(at+"[2]", "like takes a string pattern")
		}
		glob, err := parseGlob(pat)
		if err != nil {
			return statement{}, policyErr(at+"[2]", "%v", err)
		}
		s.glob = glob
	case opNot:
		sub, err := parseStatement(list[1], depth+1, at+"[1]")
		if err != nil {
			return statement{}, err
		}
		s.subs = []statement{sub}
	case opAnd, opOr:
		subs, ok := list[1].([]any)
		if !ok {
			return statement{}, policyErr(at+"[1]", "%q takes a list of statements", name)
		}
		s.subs = make([]statement, len(subs))
		for i, sv := range subs {
			sub, err := parseStatement(sv, depth+1, fmt.Sprintf("%s[1][%d]", at, i))
			if err != nil {
				return statement{}, err
			}
			s.subs[i] = sub
		}
	case opAll, opAny:
		sub, err := parseStatement(list[2], depth+1, at+"[2]")
		if err != nil {
			return statement{}, err
		}
		s.subs = []statement{sub}
	}
	return s, nil
}

func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, err := canonical.Marshal(v)
	if err != nil || len(b) > 40 {
		return fmt.Sprintf("a %T", v)
	}
	return string(b)
}

// parseGlob splits a like pattern at its wildcards: "*" matches any run of
// characters, "\*" is a literal star and "\\" a literal backslash. Any
// other backslash is refused rather than guessed at (UCAN 1.0 names only
// "\*"), so a pattern means one thing to every peer.
func parseGlob(pat string) ([]string, error) {
	var parts []string
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; c {
		case '*':
			parts = append(parts, b.String())
			b.Reset()
		case '\\':
			if i+1 >= len(pat) || (pat[i+1] != '*' && pat[i+1] != '\\') {
				return nil, fmt.Errorf("pattern %q: a backslash escapes \"*\" or \"\\\" only", pat)
			}
			i++
			b.WriteByte(pat[i])
		default:
			b.WriteByte(c)
		}
	}
	return append(parts, b.String()), nil
}

// globMatch reports whether s matches the parts of a pattern: the first
// part is a prefix, the last a suffix, and the others appear in order
// between them. Matching bytes is matching characters: every part is whole
// UTF-8, which cannot match inside another character.
func globMatch(parts []string, s string) bool {
	if len(parts) == 1 {
		return s == parts[0]
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}

// truth is a statement's value: true, false, or unresolved.
type truth int8

const (
	tFalse truth = iota
	tTrue
	tUnresolved
)

func truthOf(b bool) truth {
	if b {
		return tTrue
	}
	return tFalse
}

// Holds reports whether every statement is true of args, the invocation's
// arguments (see [Invocation.Args]).
func (p *Policy) Holds(args any) bool {
	for i := range p.stmts {
		if p.stmts[i].eval(args) != tTrue {
			return false
		}
	}
	return true
}

// Len is the number of top-level statements.
func (p *Policy) Len() int { return len(p.stmts) }

func (s *statement) eval(args any) truth {
	switch s.op {
	case opNot:
		switch t := s.subs[0].eval(args); t {
		case tTrue:
			return tFalse
		case tFalse:
			return tTrue
		default:
			return t
		}
	case opAnd:
		return all(len(s.subs), func(i int) truth { return s.subs[i].eval(args) })
	case opOr:
		if len(s.subs) == 0 {
			return tTrue // UCAN 1.0: "An empty array MUST be treated as true."
		}
		return anyOf(len(s.subs), func(i int) truth { return s.subs[i].eval(args) })
	}
	v, ok := s.sel.Select(args)
	if !ok {
		return tUnresolved
	}
	switch s.op {
	case opEq:
		return truthOf(canonical.Equal(v, s.val))
	case opNe:
		return truthOf(!canonical.Equal(v, s.val))
	case opLt, opLe, opGt, opGe:
		f, isNum := v.(float64)
		if !isNum {
			return tFalse // UCAN: comparing a non-number is false, never an error
		}
		want := s.val.(float64)
		switch s.op {
		case opLt:
			return truthOf(f < want)
		case opLe:
			return truthOf(f <= want)
		case opGt:
			return truthOf(f > want)
		default:
			return truthOf(f >= want)
		}
	case opLike:
		str, isStr := v.(string)
		return truthOf(isStr && globMatch(s.glob, str))
	case opAll, opAny:
		elems, isColl := collectionValues(v)
		if !isColl {
			return tFalse // UCAN: quantifying over a non-collection is false
		}
		sub := &s.subs[0]
		each := func(i int) truth { return sub.eval(elems[i]) }
		if s.op == opAll {
			return all(len(elems), each)
		}
		return anyOf(len(elems), each)
	}
	return tFalse
}

// all is Kleene's and: false if any is false, else unresolved if any is,
// else true (so all of nothing is true).
func all(n int, eval func(i int) truth) truth {
	out := tTrue
	for i := 0; i < n; i++ {
		switch eval(i) {
		case tFalse:
			return tFalse
		case tUnresolved:
			out = tUnresolved
		}
	}
	return out
}

// anyOf is Kleene's or: true if any is true, else unresolved if any is,
// else false. Any of nothing is false (an "any" over an empty list); "or"
// of no statements is true, as UCAN 1.0 requires, and never reaches here.
func anyOf(n int, eval func(i int) truth) truth {
	out := tFalse
	for i := 0; i < n; i++ {
		switch eval(i) {
		case tTrue:
			return tTrue
		case tUnresolved:
			out = tUnresolved
		}
	}
	return out
}
