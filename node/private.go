package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// A private space through the node (docs/private-spaces.md §14): its keys
// kept in the node directory (keys.go), bodies sealed on the write path
// (write.go), opened on the read path here and in the index, key changes
// and boxes written when a member is removed.

// ErrNoKey: the node holds the space's versions but not the key a body is
// sealed under; it reads them as a carrier does (docs/private-spaces.md §9).
var ErrNoKey = seal.ErrNoKey

// Opened is what a version of a private space holds, opened: its body and
// links (02 §5.1), and the key it was sealed under.
type Opened = seal.Opened

// Open opens a version's sealed body with the node's keys. A version of a
// public space, a stub and a delete give nil, nil. Without the key it is an
// error wrapping ErrNoKey; a body that does not open under a key held is a
// *seal.Error (seal/open, seal/plaintext) and nothing of it is returned.
func (n *Node) Open(ctx context.Context, v *record.Version) (*Opened, error) {
	if !v.HasBody || v.Deleted {
		return nil, nil
	}
	if private, err := n.isPrivate(ctx, v.Space); err != nil || !private {
		return nil, err
	}
	if space.IsAccessCollection(v.Collection) && v.Collection != space.KindDefine.Collection() || judge.InClear(v.Collection) {
		return nil, nil
	}
	ring := n.keys.Keyring(v.Space)
	if ring == nil {
		return nil, fmt.Errorf("minca/node: %w: the node holds no key of the space %s", ErrNoKey, v.Space)
	}
	o, err := ring.OpenVersion(v)
	if errors.Is(err, seal.ErrNoKey) {
		s, perr := seal.ParseSealed(v.Body)
		if perr != nil {
			return nil, perr
		}
		if took, terr := n.takeKeys(ctx, v.Space, s.KeyID); terr != nil {
			return nil, terr
		} else if took {
			o, err = ring.OpenVersion(v)
		}
	}
	return o, err
}

// isPrivate reports whether the node keeps a space that is private, from
// its genesis, remembered once read: a space's id fixes its genesis.
func (n *Node) isPrivate(ctx context.Context, spaceID string) (bool, error) {
	private, _, err := n.privacy(ctx, spaceID)
	return private, err
}

// privacy is isPrivate, and whether the node holds the space's genesis at
// all (held false: private is false, and says nothing).
func (n *Node) privacy(ctx context.Context, spaceID string) (private, held bool, err error) {
	if p, ok := n.privacyOf.Load(spaceID); ok {
		return p.(bool), true, nil
	}
	g, ok, err := judge.GenesisOf(ctx, n.st, spaceID)
	if err != nil || !ok {
		return false, false, err
	}
	n.privacyOf.Store(spaceID, g.Private())
	return g.Private(), true, nil
}

// opener is the node's index.Opener: what the index reads of a private
// space's bodies, with the keys the node holds when it indexes them.
type opener struct{ keys *keyStore }

func (o opener) Open(v *record.Version) (any, []record.Link, bool) {
	ring := o.keys.Keyring(v.Space)
	if ring == nil || !seal.IsSealed(v.Body) {
		return nil, nil, false
	}
	op, err := ring.OpenVersion(v)
	if err != nil || op == nil {
		return nil, nil, false
	}
	return op.Body, op.Links, true
}

// startRing keeps a private space's ring with k offered (K₀ taken at once)
// in the node's key file.
func (n *Node) startRing(g *space.Genesis, k *seal.Key) error {
	ring, err := n.keys.ring(g)
	if err != nil {
		return err
	}
	if k != nil {
		ring.Offer(k)
	}
	if _, err := n.keys.memberKey(g.ID); err != nil {
		return err
	}
	return n.keys.persist(g.ID)
}

// adoptKeys starts a ring for a private space the account's registry
// lists and this node holds no key of, when the node holds the account
// key: its member key is the account's (§6), so the boxes the account's
// other devices made to it — K₀'s at creation, every key change's since —
// open here (docs/private-spaces.md §14).
func (n *Node) adoptKeys(ctx context.Context, g *space.Genesis) error {
	if !g.Private() || n.account == nil {
		return nil
	}
	if r, err := n.keys.load(g.ID); err != nil || r != nil {
		if err != nil { // named again by every write there
			n.o.Logger.Error("a private space's key file", "space", g.ID, "err", err)
		}
		return nil
	}
	if err := n.startRing(g, nil); err != nil {
		return err
	}
	_, err := n.takeKeys(ctx, g.ID, g.EncryptionKeyID)
	return err
}

// publishMemberKey writes the account's member key for a private space
// (sys.memberkey, docs/private-spaces.md §6), unless the current one is
// already it.
func (n *Node) publishMemberKey(ctx context.Context, spaceID string) error {
	mk, err := n.keys.memberKey(spaceID)
	if err != nil {
		return err
	}
	me := n.Account()
	key := seal.MemberKeyKey(me)
	if v, err := n.st.Current(ctx, spaceID, key); err == nil && v.HasBody {
		if r, err := seal.ReadMemberKey(v, me); err == nil && r.Key.Equal(mk.Public()) {
			return nil
		}
	}
	body := (&seal.MemberKeyRecord{Member: me, Key: mk.Public()}).Object()
	if _, err := n.w.do(ctx, &writeReq{space: spaceID, collection: seal.MemberKeyCollection, key: key, body: body, sys: true}); err != nil {
		return fmt.Errorf("minca/node: publishing the member key in %s: %w", spaceID, err)
	}
	return nil
}

// ChangeKey changes a private space's key (docs/private-spaces.md §5): a
// new key whose earlier carries every key the node holds, K₀ among them,
// kept in the node's key file before the sys.key naming it is written,
// then boxed (sys.box) to every member as of the change with a member key.
// It needs /space/key. It returns the key change.
func (n *Node) ChangeKey(ctx context.Context, spaceID string) (*record.Version, error) {
	g, ok, err := judge.GenesisOf(ctx, n.st, spaceID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+spaceID)
	}
	if !g.Private() {
		return nil, writeErr(CodeBadInput, "space", "the space "+spaceID+" is public: it has no key to change")
	}
	ring := n.keys.Keyring(spaceID)
	if ring == nil {
		return nil, writeErr(CodePrivate, "space", "the node holds no key of "+spaceID+": a key change carries every earlier key, K₀ among them")
	}
	if _, err := n.takeKeys(ctx, spaceID, ""); err != nil {
		return nil, err
	}
	next, c, err := ring.NewKeyChange()
	if err != nil {
		return nil, err
	}
	if err := n.keys.persist(spaceID); err != nil {
		return nil, err
	}
	v, err := n.writeAccess(ctx, spaceID, space.KindKey, seal.KeyChangeKey(next.ID()), c.Object())
	if err != nil {
		return nil, err
	}
	return v, n.boxKey(ctx, spaceID, next, false)
}

// BoxMissing boxes the space's current keys the node holds to every
// member with a member key and no box for them (docs/private-spaces.md §7:
// a member who joined concurrently with a key change, or published its
// member key since). It is for after a sync brings new members or member
// keys; invites call it too.
func (n *Node) BoxMissing(ctx context.Context, spaceID string) error {
	ring := n.keys.Keyring(spaceID)
	if ring == nil {
		return nil
	}
	heads, err := n.keyHeads(ctx, spaceID)
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range heads {
		if k, ok := ring.Key(h.KeyID); ok && !h.Stale {
			errs = append(errs, n.boxKey(ctx, spaceID, k, true))
		}
	}
	return errors.Join(errs...)
}

// boxKey boxes k to every member now that has published a member key
// (docs/private-spaces.md §7), the account itself included, so its other
// devices open it too; with missing, only to those the store holds no box
// of k for.
func (n *Node) boxKey(ctx context.Context, spaceID string, k *seal.Key, missing bool) error {
	var members []space.Member
	if _, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		members = h.Now().Members()
		return nil
	}); err != nil {
		return err
	}
	var errs []error
	for _, m := range members {
		v, err := n.st.Current(ctx, spaceID, seal.MemberKeyKey(m.Root))
		if errors.Is(err, engine.ErrNotFound) {
			continue // no member key yet: a member boxes it when one appears (§7)
		}
		if err != nil {
			return err
		}
		if !v.HasBody || n.rootOf(v) != m.Root {
			continue
		}
		mk, err := seal.ReadMemberKey(v, m.Root)
		if err != nil {
			continue
		}
		if missing {
			bv, err := n.st.Current(ctx, spaceID, seal.BoxKey(k.ID(), m.Root))
			if err == nil && bv.HasBody {
				if b, err := seal.ReadBox(bv); err == nil && b.To.Equal(mk.Key) {
					continue
				}
			} else if err != nil && !errors.Is(err, engine.ErrNotFound) {
				return err
			}
		}
		b, err := seal.NewBox(k, spaceID, m.Root, mk.Key)
		if err != nil {
			return err
		}
		if _, err := n.w.do(ctx, &writeReq{space: spaceID, collection: seal.BoxCollection, key: seal.BoxKey(k.ID(), m.Root), body: b.Object(), sys: true}); err != nil {
			errs = append(errs, fmt.Errorf("boxing %s to %s: %w", k.ID(), m.Root, err))
		}
	}
	return errors.Join(errs...)
}

// rootOf is the account a stored version's author acted for: the author,
// or its note's issuer (the judge checked the note before storing it).
func (n *Node) rootOf(v *record.Version) string {
	if v.Proof == nil {
		return v.Author
	}
	r, err := n.notes.CheckNote(v.Proof, v.Author, nil, nil)
	if err != nil {
		return ""
	}
	return r
}

// inviteKey is the key an invite to a private space carries: the key in
// use (06 §1.3; docs/private-spaces.md §8), nil for a public space.
func (n *Node) inviteKey(ctx context.Context, g *space.Genesis) (*canonical.Object, error) {
	if !g.Private() {
		return nil, nil
	}
	heads, err := n.keyHeads(ctx, g.ID)
	if err != nil {
		return nil, err
	}
	k, err := n.sealingKey(ctx, g.ID, n.keys.Keyring(g.ID), heads)
	if err != nil {
		return nil, err
	}
	return seal.InviteKey{Key: k}.Object(), nil
}

// keyHeads are the space's key heads now (docs/private-spaces.md §5): the
// keys it is read under, and which are stale.
func (n *Node) keyHeads(ctx context.Context, spaceID string) ([]seal.Head, error) {
	var heads []seal.Head
	_, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		heads = h.Now().KeyHeads()
		return nil
	})
	return heads, err
}
