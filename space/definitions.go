package space

import (
	"slices"

	"github.com/minca-go/minca/collection"
)

// defInfo is what a state says of a collection's definition (02 §6.3).
type defInfo struct {
	// Heads are the latest counting changes to collection:<name>.
	Heads []*node
	// InForce is the change in force, nil when none is: no change, a
	// delete, or rivals that differ.
	InForce *node
	// Live: some head is a definition (not a delete), so there is one to
	// change or delete.
	Live bool
	// Contested: more than one head, and the replay picks none of them
	// (first definitions by two accounts, or a delete beside another
	// account's change). With rivals of one body, that body is in force.
	Contested bool
	// Definer is the account that first defined it, "" for no one.
	Definer string
}

// definition computes 02 §6.3 for collection name in the view.
func (v *view) definition(name string) *defInfo {
	if c, ok := v.cached("d\x00collection:", name); ok {
		return c.(*defInfo)
	}
	reg := "collection:" + name
	key := "d\x00" + reg
	hs := v.heads(reg)
	d := &defInfo{Heads: hs}
	for _, hd := range hs {
		if !hd.Deleted {
			d.Live = true
		}
	}
	switch {
	case len(hs) == 1:
		d.InForce = hs[0]
	case len(hs) > 1:
		if pick, ok := v.pickRival(reg, hs); ok {
			d.InForce = pick
		} else {
			d.Contested = true
			same := true
			for _, hd := range hs {
				if hd.Deleted || hd.DefCanon != hs[0].DefCanon {
					same = false
				}
			}
			if same {
				d.InForce = lowestID(hs)
			}
		}
	}
	if d.InForce != nil && d.InForce.Deleted {
		d.InForce = nil
	}
	if d.InForce != nil && !d.Contested {
		d.Definer = v.definer(reg, d.InForce, nil)
	}
	v.cache[key] = d
	return d
}

// pickRival is §6.3's "rival changes are not picked by id": the lowest id
// is picked only when the rivals are one account's, or none is a delete
// and every one names the same first definer, each of which could have
// been the latest alone.
func (v *view) pickRival(reg string, hs []*node) (*node, bool) {
	one := true
	for _, hd := range hs {
		if hd.Root != hs[0].Root {
			one = false
		}
	}
	if one {
		return lowestID(hs), true
	}
	var named string
	for i, hd := range hs {
		if hd.Deleted {
			return nil, false
		}
		d := v.definer(reg, hd, hd)
		if d == "" || i > 0 && d != named {
			return nil, false
		}
		named = d
	}
	return lowestID(hs), true
}

// definer is who first defined the collection as of the change f in force
// (§6.3): of the definitions that count, those that saw every removal f
// saw; of those, the ones that saw none of the others are its first
// definitions; if all are one account's, it is that account, else no one.
// within, when set, limits the changes looked at to what within saw and
// within itself: the first definer a change names.
func (v *view) definer(reg string, f, within *node) string {
	var ns []*node
	for _, n := range v.h.regs[reg] {
		if !v.in(n) || !v.counting(n) {
			continue
		}
		if within != nil && n != within && !within.anc.has(n.pos) {
			continue
		}
		ns = append(ns, n)
	}
	if o := v.over; o != nil && o.Register == reg && !slices.Contains(ns, o) && (within == nil || within == o) {
		ns = append(ns, o)
	}
	var removals, cands []*node
	for _, n := range ns {
		if n.Deleted && (n == f || f.anc.has(n.pos)) {
			removals = append(removals, n)
		}
	}
	for _, n := range ns {
		if n.Deleted {
			continue
		}
		sawAll := true
		for _, r := range removals {
			if !n.anc.has(r.pos) {
				sawAll = false
				break
			}
		}
		if sawAll {
			cands = append(cands, n)
		}
	}
	root := ""
	for _, n := range cands {
		first := true
		for _, o := range cands {
			if o != n && n.anc.has(o.pos) {
				first = false
				break
			}
		}
		if !first {
			continue
		}
		if root == "" {
			root = n.Root
		} else if root != n.Root {
			return ""
		}
	}
	return root
}

func lowestID(ns []*node) *node {
	best := ns[0]
	for _, n := range ns[1:] {
		if n.ID < best.ID {
			best = n
		}
	}
	return best
}

// inForce is the collection package's view of what is in force (02 §6.3,
// §7.2): a definition, none, or one this peer can't read.
func (d *defInfo) inForce() collection.InForce {
	if d.InForce != nil {
		if d.InForce.DefSealed {
			return collection.Unreadable()
		}
		return collection.Defined(d.InForce.Def)
	}
	if d.Contested {
		for _, hd := range d.Heads {
			if hd.DefSealed {
				return collection.Unreadable() // a peer that can't read them all (§6.3)
			}
		}
	}
	return collection.InForce{}
}

// refusesRecords: contested with none in force (§6.3, §9.4 step 2).
func (d *defInfo) refusesRecords() bool {
	return d.Contested && d.InForce == nil && !d.inForce().Unreadable
}
