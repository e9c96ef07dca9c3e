package space

import (
	"github.com/minca-go/minca/canonical"
	"slices"
	"strings"

	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// State is the access state as of a set of changes (02 §3.1 seen): the
// replay of them and everything they saw. It answers who is a member with
// which roles and grants, which keys are revoked, which lines forked, and
// which definitions are in force (02 §6.3). A State is valid until its
// History is next changed.
type State struct {
	h *History
	v *view
}

// Member is one member of a space as of a state.
type Member struct {
	Root    string
	Founder bool
	Roles   []string
}

// IsNow reports whether the state is the one with every change held.
func (s *State) IsNow() bool { return s.v == s.h.now }

// IsMember reports whether root is a member: a founder, or assigned and
// not removed.
func (s *State) IsMember(root string) bool { return s.v.founder(root) || s.v.member(root).present }

// IsFounder reports whether root is a founder.
func (s *State) IsFounder(root string) bool { return s.v.founder(root) }

// Roles lists root's roles (none for one who is not a member).
func (s *State) Roles(root string) []string { return slices.Clone(s.v.member(root).roles) }

// Grants is what root holds: all for a founder, else its roles' grants.
func (s *State) Grants(root string) (all bool, grants []Grant) {
	gs := s.v.grantsOf(root)
	return gs.all, gs.grants
}

// Members lists every member, founders first, then by root.
func (s *State) Members() []Member {
	roots := map[string]bool{}
	for _, f := range s.h.g.Founders {
		roots[f] = true
	}
	for reg := range s.h.regs {
		for _, p := range []string{"member:", "founder:"} {
			if r, ok := strings.CutPrefix(reg, p); ok {
				roots[r] = true
			}
		}
	}
	var out []Member
	for r := range roots {
		if !s.IsMember(r) {
			continue
		}
		out = append(out, Member{Root: r, Founder: s.v.founder(r), Roles: s.Roles(r)})
	}
	slices.SortFunc(out, func(a, b Member) int {
		if a.Founder != b.Founder {
			if a.Founder {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Root, b.Root)
	})
	return out
}

// Role is one role as of a state.
type Role struct {
	Name   string
	Grants []Grant
}

// Role returns a role's grants, and whether it exists.
func (s *State) Role(name string) ([]Grant, bool) {
	r := s.v.role(name)
	return r.grants, r.exists
}

// Roles lists every role that exists, by name.
func (s *State) AllRoles() []Role {
	names := map[string]bool{}
	for n := range s.h.g.Roles {
		names[n] = true
	}
	for reg := range s.h.regs {
		if n, ok := strings.CutPrefix(reg, "role:"); ok {
			names[n] = true
		}
	}
	var out []Role
	for n := range names {
		if gs, ok := s.Role(n); ok {
			out = append(out, Role{Name: n, Grants: gs})
		}
	}
	slices.SortFunc(out, func(a, b Role) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Revoked lists the keys revoked, with what each keeps (06 §2.9).
func (s *State) Revoked() []RevokedKey {
	var out []RevokedKey
	for reg := range s.h.regs {
		if kr, ok := strings.CutPrefix(reg, "revoke:"); ok {
			key, root, _ := strings.Cut(kr, "|")
			if cut, ok := s.v.revoked(key, root); ok {
				out = append(out, RevokedKey{Key: key, Root: root, Cutoffs: cut})
			}
		}
	}
	slices.SortFunc(out, func(a, b RevokedKey) int { return strings.Compare(a.Key+"|"+a.Root, b.Key+"|"+b.Root) })
	return out
}

// RevokedKeeps reports what a revoke of key for root keeps: per collection
// the last log place; ok false when the key is not revoked.
func (s *State) RevokedKeeps(key, root string) (map[string]int64, bool) {
	return s.v.revoked(key, root)
}

// Forked lists the writers' lines proven forked, from their first place
// taken away (02 §4.10).
func (s *State) Forked() []ForkedLine {
	var out []ForkedLine
	for reg, ns := range s.h.regs {
		if ac, ok := strings.CutPrefix(reg, "fork:"); ok {
			author, coll, _ := strings.Cut(ac, "\n")
			if from, ok := s.v.forked(author, coll); ok {
				var roots []string
				for _, n := range ns {
					if s.v.in(n) {
						roots = append(roots, n.ForkRoots...)
					}
				}
				slices.Sort(roots)
				out = append(out, ForkedLine{Author: author, Collection: coll, From: from, Roots: slices.Compact(roots)})
			}
		}
	}
	slices.SortFunc(out, func(a, b ForkedLine) int {
		return strings.Compare(a.Author+"\n"+a.Collection, b.Author+"\n"+b.Collection)
	})
	return out
}

// ForkedFrom reports the first place of a line taken away, if forked.
func (s *State) ForkedFrom(author, coll string) (int64, bool) { return s.v.forked(author, coll) }

// Definition is what a state says of one collection's definition (02 §6.3).
type Definition struct {
	Name string
	// InForce is the id of the change in force; "" when none is.
	InForce string
	// Def is the definition in force, nil when none is or it is invalid
	// (which counts as none, §6.1) or can't be read.
	Def        *collection.Definition
	Unreadable bool
	// Invalid says why the definition in force is invalid, and so counts
	// as no definition at all: no schema, no rules, no topics (02 §6.1);
	// "" when it is valid, sealed, or none is in force.
	Invalid string
	// Contested: rivals the replay picks none of (§6.3). With one body
	// among them, that body is in force; otherwise none is, and a version
	// in the collection is refused.
	Contested bool
	// Rivals are the ids of the latest changes when there is more than
	// one, sorted.
	Rivals []string
	// Changes are the digests of the change in force, or else of the
	// rivals in Rivals' order: what the store keys them by.
	Changes []canonical.ID
	// Definer is the account that first defined it; "" for no one.
	Definer string
}

// Definition returns what the state says of a collection's definition.
func (s *State) Definition(name string) Definition {
	d := s.v.definition(name)
	out := Definition{Name: name, Contested: d.Contested, Definer: d.Definer}
	in := d.inForce()
	out.Def, out.Unreadable = in.Def, in.Unreadable
	if d.InForce != nil {
		out.InForce, out.Invalid = d.InForce.ID, d.InForce.DefInvalid
		out.Changes = []canonical.ID{d.InForce.Digest}
	}
	if len(d.Heads) > 1 {
		heads := slices.Clone(d.Heads)
		slices.SortFunc(heads, func(a, b *node) int { return strings.Compare(a.ID, b.ID) })
		for _, hd := range heads {
			out.Rivals = append(out.Rivals, hd.ID)
			if d.InForce == nil {
				out.Changes = append(out.Changes, hd.Digest)
			}
		}
	}
	return out
}

// Definitions lists every collection with a change to its definition.
func (s *State) Definitions() []Definition {
	var names []string
	for reg := range s.h.regs {
		if n, ok := strings.CutPrefix(reg, "collection:"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []Definition
	for _, n := range names {
		if d := s.v.definition(n); len(d.Heads) > 0 {
			out = append(out, s.Definition(n))
		}
	}
	return out
}

// InForce is the definition in force for a collection, as the rule checks
// take it (02 §7.2), and whether a version in it is refused because it is
// contested with none in force (§6.3, §9.4 step 2).
func (s *State) InForce(coll string) (in collection.InForce, contested bool) {
	if record.IsSys(coll) {
		return collection.InForce{}, false
	}
	d := s.v.definition(coll)
	return d.inForce(), d.refusesRecords()
}

// Relays are the relays the space names (docs/spaces.md, sys.relays).
func (s *State) Relays() []string { return s.v.relays() }

// Keepers are the nodes named to keep the space whole (06 §4.2).
func (s *State) Keepers() []Keeper { return s.v.keepers() }

// Keys are a private space's current key ids (sys.key).
func (s *State) Keys() []string { return s.v.keyIDs() }

// Request is a version of a space asking to stand (02 §9.4 step 3): its
// root, key, collection and place in its writer's line, and what it
// invokes — nil for a sys.* collection outside the access history, where
// being a member is enough (§7.2).
type Request struct {
	Root, Author, Collection string
	Log                      *record.Log
	Inv                      *identity.Invocation
}

// Judge makes the access history's judgement of a version (02 §9.4 step
// 3): its root is a member holding a grant for what it does, and its key
// is not revoked, nor its line forked, at its place. nil when it passes;
// else a refusal with a standing/… code.
func (s *State) Judge(r Request) *record.Refusal { return judgeIn(s.v, r, nil) }

// judgeIn is State.Judge in a view, recording the registers it reads when
// reads is set.
func judgeIn(v *view, r Request, reads *[]string) *record.Refusal {
	j := judging{v: v, reads: reads}
	var n int64
	if r.Log != nil {
		n = r.Log.N
	}
	if rf := j.keyStanding(r.Author, r.Root, r.Collection, n, r.Log != nil, CodeStandingRevoked, CodeStandingForked); rf != nil {
		return rf
	}
	if !j.isMember(r.Root) {
		return refuse(CodeStandingMember, "author", "its root "+r.Root+" is not a member of the space (02 §9.4 step 3)")
	}
	if r.Inv != nil && !j.grantsOf(r.Root).admits(r.Inv) {
		return refuse(CodeStandingGrant, "author", "its root "+r.Root+" holds no grant of "+r.Inv.Cmd+" for "+r.Inv.Collection+" (02 §9.4 step 3)")
	}
	return nil
}

// JudgeStored is the access history's judgement now of a stored version
// that passed [State.Judge] as of its seen (02 §9.4's last paragraph): it
// is taken away, and nil is not returned, when
//
//   - its key is revoked up to before it, or its line proven forked at or
//     before it (06 §2.9, 02 §4.10), whatever it saw;
//   - the state with every change held refuses it;
//   - the state as of its seen, with those changes counted as they count
//     now, refuses it: a change it saw was struck since; or
//   - a change it had not seen, and that counts, takes from it what it
//     used — a removal of its root, a role taken, a role's grants narrowed
//     — as the merge rule says of access changes (docs/spaces.md, The merge
//     rule): the state as of its seen with that change added refuses it.
//
// The last is what keeps a removal's work done when the member is let in
// again: a readmission it had not seen gives nothing back (02 §4.10: a
// removal or a demotion "takes away what it had not seen and did not
// keep"). Except that a removal or a change of roles that kept the version
// (docs/spaces.md, What a change keeps) — and every change that saw one
// that kept it — does not take it away. seen is the version's seen.
func (h *History) JudgeStored(r Request, seen []string) *record.Refusal {
	rf := h.Now().Judge(r)
	if rf != nil && (rf.Code == CodeStandingRevoked || rf.Code == CodeStandingForked) {
		return rf
	}
	ns, err := h.closure(seen)
	if err != nil {
		return rf
	}
	saw := closureOf(ns)
	var kept []*node
	if r.Log != nil {
		for _, e := range h.keeping {
			if e.counts && !saw.has(e.pos) && e.keeps(r.Author, r.Collection, r.Log.N) {
				kept = append(kept, e)
			}
		}
	}
	// spared: a change that kept the version, or saw one that did.
	spared := func(n *node) bool {
		for _, e := range kept {
			if n == e || n.anc.has(e.pos) {
				return true
			}
		}
		return false
	}
	if rf != nil {
		if len(kept) == 0 {
			return rf
		}
		v := h.newView(ancestry{prefix: int32(len(h.nodes))}, true, func(n *node) bool { return n.counts && !spared(n) })
		if judgeIn(v, r, nil) != nil {
			return rf
		}
	}
	at := h.newView(saw, false, nil)
	var reads []string
	if rf := judgeIn(at, r, &reads); rf != nil {
		return rf
	}
	for _, reg := range reads {
		if !strings.HasPrefix(reg, "member:") && !strings.HasPrefix(reg, "founder:") && !strings.HasPrefix(reg, "role:") {
			continue // revokes and forks were judged above, as of now
		}
		for _, d := range h.regs[reg] {
			if !d.counts || saw.has(d.pos) || spared(d) {
				continue
			}
			if rf := judgeIn(at.with(d), r, nil); rf != nil {
				return rf
			}
		}
	}
	return nil
}

// Counts reports whether the change with this id is in the state's set,
// and whether it counts there.
func (s *State) Counts(id string) (counts, in bool) {
	n, ok := s.h.byID[id]
	if !ok || !s.v.in(n) {
		return false, false
	}
	return s.v.counting(n), true
}
