package space_test

import (
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

func privateWorld(t *testing.T, first *seal.Key, founders ...*actor) *world {
	t.Helper()
	var dids []string
	for _, f := range founders {
		dids = append(dids, f.did)
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "private", Private: true, Founders: dids,
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: t.Name(), EncryptionKeyID: first.ID()})
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, g: g, h: space.NewHistory(g, space.Env{}), atKey: map[string]*record.Version{}, byName: map[string]*record.Version{}}
}

// keyChange is a sys.key change to a new key, carrying first, by a.
func (w *world) keyChange(a *actor, first *seal.Key, seen []string) (*seal.Key, *record.Version) {
	w.t.Helper()
	next := seal.NewKey()
	c, err := seal.NewKeyChange(w.g.ID, first.ID(), next, []*seal.Key{first})
	if err != nil {
		w.t.Fatal(err)
	}
	return next, w.sign(a, seal.KeyChangeCollection, seal.KeyChangeKey(next.ID()), c.Object(), seen)
}

func heads(t *testing.T, st *space.State, want ...seal.Head) {
	t.Helper()
	got := st.KeyHeads()
	if len(got) != len(want) {
		t.Fatalf("heads %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("heads %v, want %v", got, want)
		}
	}
}

// The current keys: K₀ until a key change; stale once someone removed
// since may hold it; concurrent key changes are all current, the one that
// had not seen a removal stale; a removed member let back in makes no key
// stale.
func TestKeyHeads(t *testing.T) {
	alice, ben, mal := newActor(t, "alice"), newActor(t, "ben"), newActor(t, "mallory")
	first := seal.NewKey()
	w := privateWorld(t, first, alice)
	heads(t, w.h.Now(), seal.Head{KeyID: first.ID()})

	a1 := w.sign(alice, "sys.assign", memberKey(ben.did), assignBody(ben.did), nil)
	w.add(a1)
	a2 := w.sign(alice, "sys.assign", memberKey(mal.did), assignBody(mal.did), ids(a1))
	w.add(a2)
	heads(t, w.h.Now(), seal.Head{KeyID: first.ID()})

	// Mallory removed: K₀ is stale; a key change that saw the removal is not.
	r := w.sign(alice, "sys.remove", removeKey(mal.did), canonical.NewObject("member", mal.did), ids(a2))
	w.add(r)
	heads(t, w.h.Now(), seal.Head{KeyID: first.ID(), Stale: true})
	// A key change made apart, before hearing of the removal, and one after.
	kA, vA := w.keyChange(alice, first, ids(a2))
	w.add(vA)
	kB, vB := w.keyChange(ben, first, ids(r))
	_ = kB
	// Ben holds no /space/key: his change is refused, and the state is as before.
	w.refused(vB, space.CodeAccessGrant)
	kB, vB = w.keyChange(alice, first, ids(r))
	w.add(vB)
	want := []seal.Head{{KeyID: kA.ID(), Stale: true}, {KeyID: kB.ID()}}
	if kB.ID() < kA.ID() {
		want[0], want[1] = want[1], want[0]
	}
	heads(t, w.h.Now(), want...)
	// As of what the first change saw, K₀ alone, not stale then.
	st, err := w.h.At(ids(a2))
	if err != nil {
		t.Fatal(err)
	}
	heads(t, st, seal.Head{KeyID: first.ID()})

	// The writer seals under kB whatever the ids: kA may be Mallory's.
	ring, _ := seal.NewKeyring(w.g.ID, first.ID())
	ring.Offer(first)
	for _, k := range []*seal.Key{kA, kB} {
		c, _ := seal.ReadKeyChange(w.atKey[seal.KeyChangeKey(k.ID())].Body)
		ring.Offer(k)
		if err := ring.Take(c); err != nil {
			t.Fatal(err)
		}
	}
	if cur, err := ring.Current(w.h.Now().KeyHeads()); err != nil || cur.ID() != kB.ID() {
		t.Fatalf("current %v, %v", cur, err)
	}

	// A change that saw both is the one current key.
	kC, vC := w.keyChange(alice, first, ids(vA, vB))
	w.add(vC)
	heads(t, w.h.Now(), seal.Head{KeyID: kC.ID()})

	// Mallory let back in: nothing is stale for her.
	back := w.sign(alice, "sys.assign", memberKey(mal.did), assignBody(mal.did), ids(vC))
	w.add(back)
	heads(t, w.h.Now(), seal.Head{KeyID: kC.ID()})
}

func TestKeyHeadsPublic(t *testing.T) {
	alice := newActor(t, "alice")
	w := newWorld(t, []*actor{alice}, nil)
	if hs := w.h.Now().KeyHeads(); hs != nil {
		t.Fatalf("a public space has keys: %v", hs)
	}
}
