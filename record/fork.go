package record

import (
	"fmt"

	"github.com/minca-go/minca/canonical"
)

// LineProof proves a writer's line is not one (02 §4.10): a fork, two
// versions at one place, or a break, a version whose log.prev names one that
// is not one place before it in its line. Nothing else is needed to check
// one, so it is proven to everyone. A and B are kept as stubs.
type LineProof struct {
	Kind string   // "fork" or "break"
	A, B *Version // fork: the two versions; break: v and the version p its log.prev names
}

// Line names one writer's line: a key's versions in one collection of one
// space (02 §4.10).
type Line struct {
	Space, Author, Collection string
}

// LineOf returns the line a version is in; ok is false for a version with
// no place (a loose one).
func LineOf(v *Version) (Line, bool) {
	if !v.HasSpace || v.Log == nil {
		return Line{}, false
	}
	return Line{Space: v.Space, Author: v.Author, Collection: v.Collection}, true
}

// Fork returns the proof that a and b fork a line: the same author, space
// and collection, the same log.n, different ids (02 §4.10). Both must have
// passed [Verifier.Verify]; either may be a stub.
func Fork(a, b *Version) (*LineProof, bool) {
	la, okA := LineOf(a)
	lb, okB := LineOf(b)
	if !okA || !okB || la != lb || a.Log.N != b.Log.N || a.ID == b.ID {
		return nil, false
	}
	if b.ID < a.ID { // one proof for one pair, whichever order it was found in
		a, b = b, a
	}
	return &LineProof{Kind: "fork", A: a.Stub(), B: b.Stub()}, true
}

// Break returns the proof that v breaks its line: its log.prev is p's id,
// and p is another key's, another space's or another collection's, or not
// one place before (p.log.n ≠ v.log.n − 1) (02 §4.10). Both must have passed
// [Verifier.Verify]; either may be a stub.
func Break(v, p *Version) (*LineProof, bool) {
	if v.Log == nil || v.Log.N == 0 || v.Log.Prev != p.ID {
		return nil, false
	}
	lv, _ := LineOf(v)
	lp, okP := LineOf(p)
	if okP && lv == lp && p.Log.N == v.Log.N-1 {
		return nil, false
	}
	return &LineProof{Kind: "break", A: v.Stub(), B: p.Stub()}, true
}

// From is the first place in the line the proof takes away: a fork's place,
// a break's v.log.n (02 §4.10).
func (p *LineProof) From() int64 { return p.A.Log.N }

// Line is the line the proof is about: A's.
func (p *LineProof) Line() Line {
	l, _ := LineOf(p.A)
	return l
}

// Value is the proof as JSON: {"kind", "versions": [A, B]}, both stubs, as
// a sys.fork body carries it.
func (p *LineProof) Value() *canonical.Object {
	return canonical.NewObject("kind", p.Kind, "versions", []any{p.A.Object(), p.B.Object()})
}

// ParseLineProof reads a proof value, verifies both versions with vf and
// checks that they prove what the proof says. Anyone can check one. The
// versions are quoted envelopes: a retained one is read as a stub too
// ([QuotedFromValue]).
func ParseLineProof(val any, vf *Verifier) (*LineProof, error) {
	o, ok := val.(*canonical.Object)
	if !ok {
		return nil, fmt.Errorf("minca/record: a line proof is an object")
	}
	kind, _ := o.Get("kind")
	vs, _ := o.Get("versions")
	arr, ok := vs.([]any)
	if !ok || len(arr) != 2 {
		return nil, fmt.Errorf("minca/record: a line proof carries two versions")
	}
	var pair [2]*Version
	for i, e := range arr {
		v, err := QuotedFromValue(e)
		if err != nil {
			return nil, fmt.Errorf("minca/record: line proof version %d: %w", i, err)
		}
		if err := vf.Verify(v); err != nil {
			return nil, fmt.Errorf("minca/record: line proof version %d: %w", i, err)
		}
		pair[i] = v
	}
	var proof *LineProof
	switch kind {
	case "fork":
		proof, ok = Fork(pair[0], pair[1])
	case "break":
		proof, ok = Break(pair[0], pair[1])
	default:
		return nil, fmt.Errorf("minca/record: a line proof's kind is fork or break")
	}
	if !ok {
		return nil, fmt.Errorf("minca/record: the two versions prove no %v", kind)
	}
	return proof, nil
}
