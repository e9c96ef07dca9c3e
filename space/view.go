package space

import (
	"slices"
	"strings"
)

// view is a state of the replay: a set of changes (every held one, or an
// ancestry), which of them count in it, and the registers' values, read
// lazily and cached. over, when set, is one more change taken as counting
// and as having seen what it saw: the state a change would have been
// judged in had it seen over (docs/spaces.md, The merge rule).
type view struct {
	h      *History
	anc    ancestry
	all    bool
	status func(*node) bool // nil: as the history counts now
	over   *node
	cache  map[string]any
}

func (h *History) newView(a ancestry, all bool, st func(*node) bool) *view {
	return &view{h: h, anc: a, all: all, status: st, cache: map[string]any{}}
}

// viewOf is the state as of a set of changes: their replay alone.
func (h *History) viewOf(a ancestry) *view {
	if len(a.extra) == 0 && a.prefix == int32(len(h.nodes)) {
		return h.now
	}
	k := a.key()
	if v, ok := h.views[k]; ok {
		return v
	}
	var st func(*node) bool
	if len(a.extra) == 0 {
		// The first prefix changes added are a replay of their own: how
		// each counted once the history held that many.
		t := a.prefix
		st = func(n *node) bool { return countedAt(n, t) }
	} else {
		st = h.restricted(a)
	}
	v := h.newView(a, false, st)
	if len(h.views) >= maxViews {
		h.views = map[string]*view{}
	}
	h.views[k] = v
	return v
}

// restricted computes which changes count in the replay of a set that is
// more than the first changes added: from how they counted then, judging
// again what the rest of the set takes from them.
func (h *History) restricted(a ancestry) func(*node) bool {
	P := a.prefix
	over := map[int32]bool{}
	status := func(n *node) bool {
		if c, ok := over[n.pos]; ok {
			return c
		}
		return countedAt(n, P)
	}
	var struck []int32
	for _, n := range h.everStruck {
		if n.pos < P && !countedAt(n, P) {
			struck = append(struck, n.pos)
		}
	}
	slices.Sort(struck)
	start := a.extra[0]
	for _, e := range a.extra {
		x := h.nodes[e]
		for _, z := range x.strikes {
			if z.pos < start && a.has(z.pos) {
				start = z.pos
			}
		}
		if x.Kind == KindFork {
			for _, z := range h.nodes[:min(start, x.pos)] {
				if x.proves(z) && a.has(z.pos) {
					start = z.pos
					break
				}
			}
		}
	}
	inSet := func(n *node) bool { return a.has(n.pos) }
	for p := start; p < a.top(); p++ {
		if !a.has(p) {
			continue
		}
		w := h.nodes[p]
		c := !h.forkedOut(w, inSet)
		for _, s := range w.strikers {
			if a.has(s.pos) {
				c = false
				break
			}
		}
		if c && h.anyStruck(w.anc, struck) {
			c = h.admissible(w, h.newView(w.anc, false, status), nil) == nil
		}
		if p >= P || c != countedAt(w, P) {
			over[p] = c
		}
		i, found := slices.BinarySearch(struck, p)
		if !c && !found {
			struck = slices.Insert(struck, i, p)
		} else if c && found {
			struck = slices.Delete(struck, i, i+1)
		}
	}
	return status
}

// with is the view with one more change over (see view).
func (v *view) with(d *node) *view {
	return &view{h: v.h, anc: v.anc, all: v.all, status: v.status, over: d, cache: map[string]any{}}
}

func (v *view) in(n *node) bool { return v.all || v.anc.has(n.pos) }

func (v *view) counting(n *node) bool {
	if v.status == nil {
		return n.counts
	}
	return v.status(n)
}

// cached is v.cache at the key parts make, looked up without making the
// key's string (the lookups are per version judged; a key is made only
// to be stored).
func (v *view) cached(parts ...string) (any, bool) {
	var buf [192]byte
	k := buf[:0]
	for _, p := range parts {
		k = append(k, p...)
	}
	c, ok := v.cache[string(k)]
	return c, ok
}

// heads are the register's latest counting changes in the view: those no
// other counting change there saw.
func (v *view) heads(reg string) []*node {
	if c, ok := v.cached("h\x00", reg); ok {
		return c.([]*node)
	}
	key := "h\x00" + reg
	list := v.h.regs[reg]
	var hs []*node
	reach := int32(-1)
	for i := len(list) - 1; i >= 0; i-- {
		n := list[i]
		if n.pos < reach {
			break // every earlier one is below a head's prefix: that head saw it
		}
		if !v.in(n) || !v.counting(n) {
			continue
		}
		seen := false
		for _, hd := range hs {
			if hd.anc.has(n.pos) {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		hs = append(hs, n)
		reach = max(reach, n.anc.prefix)
	}
	if o := v.over; o != nil && o.Register == reg {
		kept := hs[:0:0]
		for _, hd := range hs {
			if !o.anc.has(hd.pos) {
				kept = append(kept, hd)
			}
		}
		hs = append(kept, o)
	}
	v.cache[key] = hs
	return hs
}

// all lists every counting change of the register in the view, for the
// registers that accumulate (revokes, forks).
func (v *view) every(reg string) []*node {
	var out []*node
	for _, n := range v.h.regs[reg] {
		if v.in(n) && v.counting(n) {
			out = append(out, n)
		}
	}
	if o := v.over; o != nil && o.Register == reg {
		out = append(out, o)
	}
	return out
}

type memberVal struct {
	present bool
	roles   []string
}

// member is the member register of root: present with its roles, or not.
// A genesis founder starts present with no roles. Concurrent latest changes
// merge to the least: a removal wins, else the roles all of them give.
func (v *view) member(root string) memberVal {
	if c, ok := v.cached("member:", root); ok {
		return c.(memberVal)
	}
	reg := "member:" + root
	hs := v.heads(reg)
	var out memberVal
	if len(hs) == 0 {
		out.present = v.h.g.IsFounder(root)
	} else {
		out.present = true
		for i, hd := range hs {
			if hd.Kind == KindRemove {
				out = memberVal{}
				break
			}
			if i == 0 {
				out.roles = hd.Roles
			} else {
				out.roles = intersect(out.roles, hd.Roles)
			}
		}
	}
	v.cache[reg] = out
	return out
}

// founder is the founder register of root: a genesis founder starts one; a
// succeed makes one, a step down ends it; concurrent latest changes merge
// to the least.
func (v *view) founder(root string) bool {
	if c, ok := v.cached("founder:", root); ok {
		return c.(bool)
	}
	reg := "founder:" + root
	hs := v.heads(reg)
	out := len(hs) == 0 && v.h.g.IsFounder(root) || len(hs) > 0
	for _, hd := range hs {
		if hd.Kind == KindStepdown {
			out = false
		}
	}
	v.cache[reg] = out
	return out
}

type roleVal struct {
	exists bool
	grants []Grant
}

// role is a role's register: its grants, or gone. Concurrent latest
// changes merge to the grants all of them give; a delete among them
// removes it.
func (v *view) role(name string) roleVal {
	if c, ok := v.cached("role:", name); ok {
		return c.(roleVal)
	}
	reg := "role:" + name
	hs := v.heads(reg)
	var out roleVal
	if len(hs) == 0 {
		gs, ok := v.h.g.Roles[name]
		out = roleVal{exists: ok, grants: gs}
	} else {
		out.exists = true
		for i, hd := range hs {
			if hd.Deleted {
				out = roleVal{}
				break
			}
			if i == 0 {
				out.grants = hd.Grants
			} else {
				out.grants = intersectGrants(out.grants, hd.Grants)
			}
		}
	}
	v.cache[reg] = out
	return out
}

// grantsOf is what root holds: every grant for a founder, else the grants
// of its roles; nothing for one who is not a member.
func (v *view) grantsOf(root string) grantSet {
	if v.founder(root) {
		return grantSet{all: true}
	}
	m := v.member(root)
	if !m.present {
		return grantSet{}
	}
	var gs []Grant
	for _, r := range m.roles {
		gs = append(gs, v.role(r).grants...)
	}
	return grantSet{grants: gs}
}

type inviteVal struct {
	open  bool
	key   string
	roles []string
}

// invite is an invite's register (by the owner part of its key): open
// with its roles, or closed. A close among concurrent latest changes wins;
// else the roles all of them give.
func (v *view) invite(tag string) inviteVal {
	if c, ok := v.cached("invite:", tag); ok {
		return c.(inviteVal)
	}
	reg := "invite:" + tag
	hs := v.heads(reg)
	var out inviteVal
	for i, hd := range hs {
		if hd.Deleted {
			out = inviteVal{}
			break
		}
		if i == 0 {
			out = inviteVal{open: true, key: hd.Target, roles: hd.Roles}
		} else {
			out.roles = intersect(out.roles, hd.Roles)
		}
	}
	v.cache[reg] = out
	return out
}

// revoked is what revokes of key for root keep: per collection the last
// log place kept, the least any of them keeps; ok false when none.
func (v *view) revoked(key, root string) (map[string]int64, bool) {
	type rv struct {
		cut map[string]int64
		ok  bool
	}
	if c, ok := v.cached("revoke:", key, "|", root); ok {
		r := c.(rv)
		return r.cut, r.ok
	}
	reg := "revoke:" + key + "|" + root
	ns := v.every(reg)
	var out rv
	for i, n := range ns {
		if i == 0 {
			out = rv{cut: map[string]int64{}, ok: true}
			for c, p := range n.Cutoffs {
				out.cut[c] = p
			}
			continue
		}
		for c, p := range out.cut {
			q, ok := n.Cutoffs[c]
			if !ok {
				delete(out.cut, c)
			} else if q < p {
				out.cut[c] = q
			}
		}
	}
	v.cache[reg] = out
	return out.cut, out.ok
}

// forked is the first place of a writer's line any proof in the view
// takes away (02 §4.10: the lowest counts).
func (v *view) forked(author, coll string) (int64, bool) {
	type fv struct {
		from int64
		ok   bool
	}
	if c, ok := v.cached("fork:", author, "\n", coll); ok {
		f := c.(fv)
		return f.from, f.ok
	}
	reg := "fork:" + author + "\n" + coll
	// Every proof in the view, counting or not: a proof proves whatever
	// else its author could do (see History.forkedOut).
	var out fv
	for _, n := range v.h.regs[reg] {
		if v.in(n) && (!out.ok || n.ForkFrom < out.from) {
			out = fv{from: n.ForkFrom, ok: true}
		}
	}
	if o := v.over; o != nil && o.Register == reg && (!out.ok || o.ForkFrom < out.from) {
		out = fv{from: o.ForkFrom, ok: true}
	}
	v.cache[reg] = out
	return out.from, out.ok
}

// keyIDs are a private space's current keys: the latest key changes'.
func (v *view) keyIDs() []string {
	var out []string
	for _, hd := range v.heads("key") {
		out = append(out, hd.KeyID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// relays are the relays the latest sys.relays name, together.
func (v *view) relays() []string {
	var out []string
	for _, hd := range v.heads("relays") {
		out = append(out, hd.Relays...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// keepers are the keepers the latest sys.keepers name, together; a keeper
// two of them name differently is shown by the first of its names.
func (v *view) keepers() []Keeper {
	byDID := map[string]string{}
	for _, hd := range v.heads("keepers") {
		for _, k := range hd.Keepers {
			if n, ok := byDID[k.DID]; !ok || k.Name < n {
				byDID[k.DID] = k.Name
			}
		}
	}
	out := make([]Keeper, 0, len(byDID))
	for d, n := range byDID {
		out = append(out, Keeper{DID: d, Name: n})
	}
	slices.SortFunc(out, func(a, b Keeper) int { return strings.Compare(a.DID, b.DID) })
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func intersectGrants(a, b []Grant) []Grant {
	var out []Grant
	for _, x := range a {
		for _, y := range b {
			if x.key == y.key {
				out = append(out, x)
				break
			}
		}
	}
	return out
}
