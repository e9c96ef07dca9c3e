package collection

import (
	"slices"
	"strconv"

	"github.com/minca-go/minca/record"
)

// Targets looks up the records links point at, for link conformance
// (02 §5.2). It is what a peer holds; a link to a key not held is normal.
type Targets interface {
	// Target returns the collection of the record at key when its current
	// version is held, stands and is not deleted; ok is false otherwise.
	Target(key string) (collection string, ok bool)
}

// LinkIssues says where a version's links do not conform to the definition
// in force (02 §5.2), with paths into the version ($.links[i]…); nil when
// they conform. A collection with no definition in force, or one the peer
// can't read, has nothing to check. In a defined collection every link's
// rel must be declared (a definition without links declares none), a role
// declared "one" appears at most once, and every link whose target is held,
// current and not deleted points into one of the declared collections.
// targets may be nil: then no target is held. Conformance is a writer's
// check and a reader's flag, never a reason to refuse a version (§9.6).
func LinkIssues(links []record.Link, in InForce, targets Targets) []Issue {
	d := in.Def
	if d == nil || in.Unreadable {
		return nil
	}
	is := issues{moreCode: CodeLinkMore}
	seen := map[string]int{}
	for i, l := range links {
		path := index("$.links", i)
		decl, ok := d.Link(l.Rel)
		if !ok {
			is.add(CodeLinkUndeclared, member(path, "rel"), "the role "+strconv.Quote(l.Rel)+" is not declared in the definition of "+d.Name+" (02 §5.2)")
			continue
		}
		seen[l.Rel]++
		if decl.One && seen[l.Rel] == 2 {
			is.add(CodeLinkCardinality, path, "the role "+strconv.Quote(l.Rel)+" is declared \"one\" and appears more than once (02 §5.2)")
		}
		if decl.AnyTarget() || targets == nil {
			continue
		}
		if coll, held := targets.Target(l.To); held && !slices.Contains(decl.To, coll) {
			is.add(CodeLinkTarget, member(path, "to"), "the target "+l.To+" is in "+coll+", not among the collections the role "+strconv.Quote(l.Rel)+" may point into (02 §5.2)")
		}
	}
	return is.result()
}
