package space

import (
	"slices"
	"strconv"
	"strings"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// judging reads a view for one judgement, recording the registers it reads
// when reads is set: a concurrent change to any other can't take from the
// change judged (docs/spaces.md, The merge rule).
type judging struct {
	v     *view
	reads *[]string
}

// read records the register named by parts joined. They are joined only
// when recording: a version's judgement (State.Judge) records nothing, and
// runs twice a local write.
func (j judging) read(parts ...string) {
	if j.reads == nil {
		return
	}
	if reg := strings.Join(parts, ""); !slices.Contains(*j.reads, reg) {
		*j.reads = append(*j.reads, j.v.h.intern(reg))
	}
}

func (j judging) member(root string) memberVal {
	j.read("member:", root)
	return j.v.member(root)
}

func (j judging) founder(root string) bool {
	j.read("founder:", root)
	return j.v.founder(root)
}

// removals are the counting removals of root in the view, its leaving
// included.
func (j judging) removals(root string) []*node {
	reg := "member:" + root
	j.read(reg)
	var out []*node
	for _, n := range j.v.h.regs[reg] {
		if n.Kind == KindRemove && j.v.in(n) && j.v.counting(n) {
			out = append(out, n)
		}
	}
	if o := j.v.over; o != nil && o.Register == reg && o.Kind == KindRemove {
		out = append(out, o)
	}
	return out
}

func (j judging) isMember(root string) bool { return j.founder(root) || j.member(root).present }

func (j judging) role(name string) roleVal {
	j.read("role:", name)
	return j.v.role(name)
}

func (j judging) grantsOf(root string) grantSet {
	if j.founder(root) {
		return grantSet{all: true}
	}
	m := j.member(root)
	if !m.present {
		return grantSet{}
	}
	var gs []Grant
	for _, r := range m.roles {
		gs = append(gs, j.role(r).grants...)
	}
	return grantSet{grants: gs}
}

func (j judging) invite(tag string) inviteVal {
	j.read("invite:", tag)
	return j.v.invite(tag)
}

func (j judging) definition(name string) *defInfo {
	j.read("collection:", name)
	return j.v.definition(name)
}

// keyStanding is what revokes and forks say of one version as of the view:
// its key revoked for its root up to before it (06 §2.9), or its line
// proven forked at or before it (02 §4.10).
func (j judging) keyStanding(author, root, coll string, n int64, hasLog bool, revoked, forked string) *record.Refusal {
	j.read("revoke:", author, "|", root)
	if cut, ok := j.v.revoked(author, root); ok {
		keep, listed := cut[coll]
		if !listed || !hasLog || n > keep {
			return refuse(revoked, "author", "the key "+author+" was revoked for "+root+", keeping "+keptText(keep, listed)+" in "+coll+", and this version is at place "+strconv.FormatInt(n, 10)+" (06 §2.9)")
		}
	}
	j.read("fork:", author, "\n", coll)
	if from, ok := j.v.forked(author, coll); ok && (!hasLog || n >= from) {
		return refuse(forked, "log", "the line of "+author+" in "+coll+" is proven forked from place "+strconv.FormatInt(from, 10)+", and this version is at place "+strconv.FormatInt(n, 10)+" (02 §4.10)")
	}
	return nil
}

func keptText(keep int64, listed bool) string {
	if !listed {
		return "nothing"
	}
	return "places 0–" + strconv.FormatInt(keep, 10)
}

// admissible judges an access change in a state: whether its author could
// make it (docs/spaces.md, Who may make a change). nil when it could.
func (h *History) admissible(n *node, v *view, reads *[]string) *record.Refusal {
	j := judging{v: v, reads: reads}
	c := n.Change
	if r := j.keyStanding(c.Author, c.Root, c.Collection, c.LogN, true, CodeAccessRevoked, CodeAccessForked); r != nil {
		return r
	}
	if c.Kind == KindAssign && c.Via != "" {
		return j.join(c)
	}
	if c.Kind == KindRemove && c.Target == c.Root {
		// Leaving: anyone who is a member may, but a founder steps down
		// first.
		if j.founder(c.Root) {
			return refuse(CodeAccessFounder, "body.member", "a founder leaves by stepping down first (sys.stepdown)")
		}
		if !j.member(c.Root).present {
			return refuse(CodeAccessNothing, "body.member", c.Root+" is not a member to leave")
		}
		return nil
	}
	if !j.isMember(c.Root) {
		return refuse(CodeAccessMember, "author", "its root "+c.Root+" is not a member of the space as of what it saw")
	}
	inv := c.invocation(h.g.ID)
	need := func(gs grantSet) *record.Refusal {
		if !gs.admits(inv) {
			return refuse(CodeAccessGrant, "author", "its root "+c.Root+" holds no grant of "+inv.Cmd+" for "+inv.Collection+" as of what it saw")
		}
		return nil
	}
	cover := func(gs grantSet, what []Grant, why string) *record.Refusal {
		if g, ok := gs.covers(what); !ok {
			return refuse(CodeAccessCover, "body", why+": "+g.Key()+" is a grant its author does not hold (docs/spaces.md, Giving no more than one holds)")
		}
		return nil
	}
	switch c.Kind {
	case KindRole:
		gs := j.grantsOf(c.Root)
		if r := need(gs); r != nil {
			return r
		}
		old := j.role(c.RoleName)
		if c.Deleted && !old.exists {
			return refuse(CodeAccessNothing, "deleted", "there is no role "+strconv.Quote(c.RoleName)+" to delete as of what it saw")
		}
		if r := cover(gs, old.grants, "it changes the role "+c.RoleName); r != nil {
			return r
		}
		return cover(gs, c.Grants, "it gives the role "+c.RoleName+" more")
	case KindAssign:
		gs := j.grantsOf(c.Root)
		if r := need(gs); r != nil {
			return r
		}
		var give []Grant
		for _, name := range c.Roles {
			rv := j.role(name)
			if !rv.exists {
				return refuse(CodeAccessRole, "body.roles", "there is no role "+strconv.Quote(name)+" as of what it saw")
			}
			give = append(give, rv.grants...)
		}
		if r := cover(gs, give, "it gives "+c.Target+" roles"); r != nil {
			return r
		}
		return cover(gs, j.grantsOf(c.Target).grants, "it changes the roles of "+c.Target)
	case KindRemove:
		if j.founder(c.Target) {
			return refuse(CodeAccessFounder, "body.member", "a founder is never removed: "+c.Target+" leaves by stepping down")
		}
		if !j.member(c.Target).present {
			return refuse(CodeAccessNothing, "body.member", c.Target+" is not a member to remove as of what it saw")
		}
		gs := j.grantsOf(c.Root)
		if r := need(gs); r != nil {
			return r
		}
		return cover(gs, j.grantsOf(c.Target).grants, "it removes "+c.Target)
	case KindInvite:
		gs := j.grantsOf(c.Root)
		if r := need(gs); r != nil {
			return r
		}
		if c.Deleted {
			cur := j.invite(c.Register[len("invite:"):])
			if !cur.open {
				return refuse(CodeAccessNothing, "deleted", "there is no open invite to close as of what it saw")
			}
			return cover(gs, j.rolesGrants(cur.roles), "it closes an invite")
		}
		for _, name := range c.Roles {
			if !j.role(name).exists {
				return refuse(CodeAccessRole, "body.roles", "there is no role "+strconv.Quote(name)+" as of what it saw")
			}
		}
		return cover(gs, j.rolesGrants(c.Roles), "it invites into roles")
	case KindRevoke:
		if c.RevokedRoot == c.Root {
			return nil // an account revokes its own keys
		}
		if j.founder(c.RevokedRoot) {
			return refuse(CodeAccessFounder, "body.root", "only a founder revokes its own keys")
		}
		gs := j.grantsOf(c.Root)
		if r := need(gs); r != nil {
			return r
		}
		return cover(gs, j.grantsOf(c.RevokedRoot).grants, "it revokes a key of "+c.RevokedRoot)
	case KindDefine:
		return j.define(c, inv)
	case KindKey:
		if !h.g.Private() {
			return refuse(CodeAccessPublic, "collection", "a public space has no key to change")
		}
		return need(j.grantsOf(c.Root))
	case KindRelays, KindKeepers:
		return need(j.grantsOf(c.Root))
	case KindFork:
		return nil // a proof is a proof: any member may show it (02 §4.10)
	case KindStepdown:
		if c.Target != c.Root || !j.founder(c.Root) {
			return refuse(CodeAccessFounder, "body.founder", "a founder steps down for itself: "+c.Target+" is not its author's root, or not a founder, as of what it saw")
		}
		return nil
	case KindSucceed:
		if !j.founder(c.Root) {
			return refuse(CodeAccessFounder, "author", "only a founder names a successor; "+c.Root+" is not one as of what it saw")
		}
		return nil
	}
	return refuse(CodeAccessBody, "collection", "not an access collection")
}

func (j judging) rolesGrants(roles []string) []Grant {
	var out []Grant
	for _, r := range roles {
		out = append(out, j.role(r).grants...)
	}
	return out
}

// join judges a sys.assign by an invite: the one joining writes it, for
// roles the invite gives, while the invite is open (docs/spaces.md).
func (j judging) join(c *Change) *record.Refusal {
	if c.Target != c.Root {
		return refuse(CodeAccessInvite, "body.member", "only the one joining uses an invite, for itself")
	}
	tag := record.OwnerPart(c.Via)
	inv := j.invite(tag)
	if !inv.open || inv.key != c.Via {
		return refuse(CodeAccessInvite, "body.invite", "the invite "+c.Via+" is not open as of what it saw")
	}
	// A member removed, or who left, comes back only by a new act of an
	// admin: an assignment, or an invite opened after the removal — never
	// by signing the same join again (docs/spaces.md, sys.assign).
	for _, rm := range j.removals(c.Target) {
		for _, hd := range j.v.heads("invite:" + tag) {
			if !hd.anc.has(rm.pos) {
				return refuse(CodeAccessInvite, "body.invite", c.Target+" was removed from the space ("+rm.ID+"), and the invite "+c.Via+" was opened before that: a removed member comes back only by an assignment or an invite opened since (docs/spaces.md)")
			}
		}
	}
	for _, r := range c.Roles {
		if !slices.Contains(inv.roles, r) {
			return refuse(CodeAccessInvite, "body.roles", "the invite does not give the role "+strconv.Quote(r))
		}
		if !j.role(r).exists {
			return refuse(CodeAccessRole, "body.roles", "there is no role "+strconv.Quote(r)+" as of what it saw")
		}
	}
	return nil
}

// define is 02 §6.3's "who may make such a change": creating needs
// /collection/define for it; changing or deleting needs that grant, or
// being whoever first defined it while a member; deleting one that does not
// exist as of what the delete saw is refused.
func (j judging) define(c *Change, inv *identity.Invocation) *record.Refusal {
	d := j.definition(c.DefName)
	if c.Deleted && !d.Live {
		return refuse(CodeAccessNothing, "deleted", "there is no definition of "+c.DefName+" to delete as of what it saw (02 §6.3)")
	}
	if j.grantsOf(c.Root).admits(inv) {
		return nil
	}
	if d.Live && d.Definer == c.Root {
		return nil
	}
	what := "create"
	if d.Live {
		what = "change"
	}
	return refuse(CodeAccessGrant, "author", "to "+what+" the definition of "+c.DefName+" its root needs /collection/define for it, or to have first defined it (02 §6.3)")
}
