package space_test

import (
	"slices"
	"testing"

	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// The merge rules of docs/spaces.md §5, each by name: concurrent changes
// resolve to less, never to more, in whichever order they arrive; a change
// that saw both sides decides.

// concurrent signs each change as if none of the others had been written:
// every one follows what the world held at its key before the first.
func (w *world) concurrent(sign ...func() *record.Version) []*record.Version {
	w.t.Helper()
	before := make(map[string]*record.Version, len(w.atKey))
	for k, v := range w.atKey {
		before[k] = v
	}
	out := make([]*record.Version, len(sign))
	for i, s := range sign {
		w.atKey = make(map[string]*record.Version, len(before))
		for k, v := range before {
			w.atKey[k] = v
		}
		out[i] = s()
	}
	// What follows sees them all: the last written at each key is its head
	// for the next writer, who names the others in seen.
	for _, v := range out {
		w.atKey[v.Key] = v
	}
	return out
}

// orders is every order of n items.
func orders(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, o := range orders(n - 1) {
		for i := 0; i <= len(o); i++ {
			p := slices.Insert(slices.Clone(o), i, n-1)
			out = append(out, p)
		}
	}
	return out
}

// counting requires what counts in the replay of everything held.
func (w *world) counting(want map[*record.Version]bool) {
	w.t.Helper()
	for v, counts := range want {
		if _, got, ok := w.h.Change(v.ID); !ok || got != counts {
			w.t.Errorf("%s %s by the change at %s: counts %v (held %v), want %v", v.Collection, v.Key, v.CreatedAt, got, ok, counts)
		}
	}
}

// Removal against assignment: one admin removes Carol while another gives
// her more roles. The member register's heads are a removal and an
// assignment, and any head a removal means not a member; both changes
// count (neither took from the other what it used).
func TestMergeRuleRemovalBeatsConcurrentAssign(t *testing.T) {
	for _, order := range orders(2) {
		w, founder, alice, bob, carol, base := adminWorld(t)
		cs := w.concurrent(
			func() *record.Version {
				return w.sign(alice, "sys.remove", removeKey(carol.did), removeBody(carol.did), base)
			},
			func() *record.Version {
				return w.sign(bob, "sys.assign", memberKey(carol.did), assignBody(carol.did, "writer", "admin"), base)
			})
		for _, i := range order {
			w.add(cs[i])
		}
		now := w.h.Now()
		if now.IsMember(carol.did) || len(now.Roles(carol.did)) != 0 {
			t.Fatalf("order %v: carol is a member %v with roles %v: a removal beats a concurrent assignment", order, now.IsMember(carol.did), now.Roles(carol.did))
		}
		if all, gs := now.Grants(carol.did); all || len(gs) != 0 {
			t.Fatalf("order %v: removed carol holds grants %v", order, gs)
		}
		w.counting(map[*record.Version]bool{cs[0]: true, cs[1]: true})
		// The founder, having seen both, assigns her again: that decides.
		again := w.sign(founder, "sys.assign", memberKey(carol.did), assignBody(carol.did, "writer"), ids(cs...))
		w.add(again)
		if roles := w.h.Now().Roles(carol.did); !w.h.Now().IsMember(carol.did) || !slices.Equal(roles, []string{"writer"}) {
			t.Fatalf("order %v: after an assignment that saw both, carol has %v", order, roles)
		}
	}
}

// Removal against role change: Bob removes Alice while Alice changes a
// role. Her change used her membership, which Bob's removal takes, and his
// removal takes nothing she used: her change is struck, the role stays as
// it was, and she is out.
func TestMergeRuleRemovalBeatsConcurrentRoleChange(t *testing.T) {
	for _, order := range orders(2) {
		w, _, alice, bob, carol, base := adminWorld(t)
		cs := w.concurrent(
			func() *record.Version {
				return w.sign(bob, "sys.remove", removeKey(alice.did), removeBody(alice.did), base)
			},
			func() *record.Version {
				return w.sign(alice, "sys.role", "role:writer", roleBody("writer", space.MustGrant("/record"), space.MustGrant(space.CmdInvite)), base)
			})
		for _, i := range order {
			w.add(cs[i])
		}
		now := w.h.Now()
		if now.IsMember(alice.did) {
			t.Fatalf("order %v: alice is still a member", order)
		}
		if gs, ok := now.Role("writer"); !ok || len(gs) != 1 || gs[0].Cmd != "/record" {
			t.Fatalf("order %v: role writer is %v (exists %v): the struck change must not count", order, gs, ok)
		}
		if _, gs := now.Grants(carol.did); len(gs) != 1 {
			t.Fatalf("order %v: carol, a writer, holds %v", order, gs)
		}
		w.counting(map[*record.Version]bool{cs[0]: true, cs[1]: false})
	}
}

// Role deletion against role change, and two role changes: the role
// register's heads merge to the least: any head a delete means no such
// role; else the grants every head gives.
func TestMergeRuleRoleDeleteBeatsConcurrentChange(t *testing.T) {
	for _, order := range orders(2) {
		w, founder, alice, bob, carol, base := adminWorld(t)
		def := w.sign(founder, "sys.role", "role:writer", roleBody("writer", space.MustGrant("/record")), base)
		w.add(def)
		cs := w.concurrent(
			func() *record.Version { return w.sign(alice, "sys.role", "role:writer", nil, ids(def)) },
			func() *record.Version {
				return w.sign(bob, "sys.role", "role:writer", roleBody("writer", space.MustGrant("/record"), space.MustGrant(space.CmdRelays)), ids(def))
			})
		for _, i := range order {
			w.add(cs[i])
		}
		now := w.h.Now()
		if gs, ok := now.Role("writer"); ok {
			t.Fatalf("order %v: role writer exists with %v: a delete beats a concurrent change", order, gs)
		}
		if _, gs := now.Grants(carol.did); len(gs) != 0 {
			t.Fatalf("order %v: carol holds %v from a deleted role", order, gs)
		}
		w.counting(map[*record.Version]bool{cs[0]: true, cs[1]: true})
	}
	for _, order := range orders(2) {
		w, founder, alice, bob, _, base := adminWorld(t)
		def := w.sign(founder, "sys.role", "role:writer", roleBody("writer", space.MustGrant("/record")), base)
		w.add(def)
		cs := w.concurrent(
			func() *record.Version {
				return w.sign(alice, "sys.role", "role:writer", roleBody("writer", space.MustGrant("/record"), space.MustGrant(space.CmdInvite)), ids(def))
			},
			func() *record.Version {
				return w.sign(bob, "sys.role", "role:writer", roleBody("writer", space.MustGrant("/record"), space.MustGrant(space.CmdRelays)), ids(def))
			})
		for _, i := range order {
			w.add(cs[i])
		}
		if gs, ok := w.h.Now().Role("writer"); !ok || len(gs) != 1 || gs[0].Cmd != "/record" {
			t.Fatalf("order %v: concurrent role changes give %v (exists %v), want the grant both give", order, gs, ok)
		}
	}
}

// Two removals: two admins who remove each other at once each undercut the
// other, so neither strikes the other: both count and both are out. Two
// removals of one member both count, and it is out.
func TestMergeRuleTwoRemovals(t *testing.T) {
	for _, order := range orders(2) {
		w, founder, alice, bob, carol, base := adminWorld(t)
		cs := w.concurrent(
			func() *record.Version {
				return w.sign(bob, "sys.remove", removeKey(alice.did), removeBody(alice.did), base)
			},
			func() *record.Version {
				return w.sign(alice, "sys.remove", removeKey(bob.did), removeBody(bob.did), base)
			})
		for _, i := range order {
			w.add(cs[i])
		}
		now := w.h.Now()
		if now.IsMember(alice.did) || now.IsMember(bob.did) || !now.IsMember(carol.did) || !now.IsMember(founder.did) {
			t.Fatalf("order %v: alice %v bob %v: a mutual removal leaves both out", order, now.IsMember(alice.did), now.IsMember(bob.did))
		}
		w.counting(map[*record.Version]bool{cs[0]: true, cs[1]: true})
	}
	for _, order := range orders(2) {
		w, _, alice, bob, carol, base := adminWorld(t)
		cs := w.concurrent(
			func() *record.Version {
				return w.sign(alice, "sys.remove", removeKey(carol.did), removeBody(carol.did), base)
			},
			func() *record.Version {
				return w.sign(bob, "sys.remove", removeKey(carol.did), removeBody(carol.did), base)
			})
		for _, i := range order {
			w.add(cs[i])
		}
		if w.h.Now().IsMember(carol.did) {
			t.Fatalf("order %v: carol is a member after two removals", order)
		}
		w.counting(map[*record.Version]bool{cs[0]: true, cs[1]: true})
	}
}

// A struck change, and what rests on it: Bob removes Alice while Alice
// makes Dave an admin; Dave, having seen only that, makes Erin a writer.
// Alice's grant is struck (Bob's removal took what it used), and Dave's
// change falls with it (it would not be allowed as of what it saw,
// counted as it now counts) — in every order the three can arrive in.
func TestMergeRuleStruckChangeTakesWhatRestsOnIt(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2}, {1, 0, 2}, {1, 2, 0}} {
		w, founder, alice, bob, _, base := adminWorld(t)
		dave, erin := newActor(t, "dave"), newActor(t, "erin")
		cs := w.concurrent(
			func() *record.Version {
				return w.sign(bob, "sys.remove", removeKey(alice.did), removeBody(alice.did), base)
			},
			func() *record.Version {
				return w.sign(alice, "sys.assign", memberKey(dave.did), assignBody(dave.did, "admin"), base)
			})
		rests := w.sign(dave, "sys.assign", memberKey(erin.did), assignBody(erin.did, "writer"), ids(cs[1]))
		all := append(cs, rests)
		removalFirst := slices.Index(order, 0) < slices.Index(order, 2)
		for _, i := range order {
			if res := w.add(all[i]); i == 2 && removalFirst && res.Counts {
				t.Fatalf("order %v: a change resting on a struck one counts as it arrives", order)
			}
		}
		now := w.h.Now()
		if now.IsMember(alice.did) || now.IsMember(dave.did) || now.IsMember(erin.did) || !now.IsMember(bob.did) {
			t.Fatalf("order %v: alice %v dave %v erin %v bob %v: want only bob", order,
				now.IsMember(alice.did), now.IsMember(dave.did), now.IsMember(erin.did), now.IsMember(bob.did))
		}
		w.counting(map[*record.Version]bool{cs[0]: true, cs[1]: false, rests: false})
		// A change that saw every side decides: the founder makes Dave a
		// writer, which counts.
		again := w.sign(founder, "sys.assign", memberKey(dave.did), assignBody(dave.did, "writer"), ids(all...))
		if res := w.add(again); !res.Counts || !w.h.Now().IsMember(dave.did) {
			t.Fatalf("order %v: an assignment that saw every side: counts %v", order, res.Counts)
		}
	}
}
