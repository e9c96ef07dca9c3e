package space

import "github.com/minca-go/minca/canonical"

// The state of a space as JSON lines, as `minca space show|roles|
// definitions|history|members` print it and the node's API answers it
// (docs/spaces.md, docs/api.md): each a canonical object, the same
// whether read from a store or through a node.

// ShowObject is the space as one object: its genesis, the access changes
// held in st and how many count, the heads, counts of members, roles and
// definitions, revoked keys with what each keeps, forked lines, relays,
// keepers and keys.
func ShowObject(h *History, st *State) *canonical.Object {
	g := h.Genesis()
	changes, counting := 0, 0
	h.Changes(func(c *Change, _ bool) bool {
		if counts, in := st.Counts(c.ID); in {
			changes++
			if counts {
				counting++
			}
		}
		return true
	})
	revoked := []any{}
	for _, r := range st.Revoked() {
		cut := &canonical.Object{}
		for c, n := range r.Cutoffs {
			cut.Set(c, float64(n))
		}
		revoked = append(revoked, canonical.NewObject("key", r.Key, "root", r.Root, "cutoffs", cut))
	}
	forked := []any{}
	for _, f := range st.Forked() {
		forked = append(forked, canonical.NewObject("author", f.Author, "collection", f.Collection, "from", float64(f.From), "roots", anys(f.Roots)))
	}
	keepers := []any{}
	for _, k := range st.Keepers() {
		keepers = append(keepers, canonical.NewObject("did", k.DID, "name", k.Name))
	}
	return canonical.NewObject("id", g.ID, "name", g.Name, "visibility", g.Visibility, "founders", anys(g.Founders),
		"createdAt", g.CreatedAt, "changes", float64(changes), "counting", float64(counting), "heads", anys(h.Heads()),
		"members", float64(len(st.Members())), "roles", float64(len(st.AllRoles())), "definitions", float64(len(st.Definitions())),
		"revoked", revoked, "forked", forked, "relays", anys(st.Relays()), "keepers", keepers, "keys", anys(st.Keys()))
}

// MemberObjects are the members, founders first: {"root","founder","roles"}.
func MemberObjects(st *State) []*canonical.Object {
	var out []*canonical.Object
	for _, m := range st.Members() {
		out = append(out, canonical.NewObject("root", m.Root, "founder", m.Founder, "roles", anys(m.Roles)))
	}
	return out
}

// RoleObjects are the roles with their grants: {"name","grants":[{"cmd","pol"}]}.
func RoleObjects(st *State) []*canonical.Object {
	var out []*canonical.Object
	for _, r := range st.AllRoles() {
		gs := make([]any, len(r.Grants))
		for i, g := range r.Grants {
			gs[i] = g.Value()
		}
		out = append(out, canonical.NewObject("name", r.Name, "grants", gs))
	}
	return out
}

// DefinitionObjects are the collections with a change to their definition
// (02 §6.3): {"name","inForce","contested","rivals","definer","valid"?,
// "definition"?,"invalid"?,"body"?,"unreadable"?}. With a change in force,
// valid says whether it is a definition at all: its body as definition
// when it is; why not as invalid, and what it says as body, when not (02
// §6.1); a sealed one is unreadable.
func DefinitionObjects(h *History, st *State) []*canonical.Object {
	var out []*canonical.Object
	for _, d := range st.Definitions() {
		o := canonical.NewObject("name", d.Name, "inForce", d.InForce, "contested", d.Contested, "rivals", anys(d.Rivals), "definer", d.Definer)
		if c, _, ok := h.Change(d.InForce); ok && d.InForce != "" {
			switch {
			case d.Unreadable:
				o.Set("unreadable", true)
			case d.Invalid != "":
				o.Set("valid", false)
				o.Set("invalid", d.Invalid+" (02 §6.1: an invalid definition is no definition at all)")
				o.Set("body", c.Body())
			default:
				o.Set("valid", true)
				o.Set("definition", c.Body())
			}
		}
		out = append(out, o)
	}
	return out
}

// ChangeObjects are the access changes in st, in replay order:
// {"id","collection","key","root","author","seen","counts"}.
func ChangeObjects(h *History, st *State) []*canonical.Object {
	var out []*canonical.Object
	h.Changes(func(c *Change, _ bool) bool {
		counts, in := st.Counts(c.ID)
		if !in {
			return true
		}
		seen := c.Seen
		if seen == nil {
			seen = []string{}
		}
		out = append(out, canonical.NewObject("id", c.ID, "collection", c.Collection, "key", c.Key, "root", c.Root,
			"author", c.Author, "seen", anys(seen), "counts", counts))
		return true
	})
	return out
}

func anys(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
