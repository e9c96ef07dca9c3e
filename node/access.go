package node

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// CreateOptions say what a new space is (docs/spaces.md, Genesis).
type CreateOptions struct {
	// Founders besides the account, by root DID.
	Founders []string
	// Roles the space starts with.
	Roles map[string][]space.Grant
	// Private makes a private space (docs/private-spaces.md): its first
	// key K₀ is made and kept in the node directory, the genesis names it
	// (encryptionKeyId), and the account's member key is published.
	Private bool
}

// CreateSpace makes a space with the account as its first founder: its
// genesis, kept with the store, and (with the account key) its sys.joined
// record in the account registry (06 §1.3). A private space's K₀ is kept
// in the node's key file before the genesis naming it is stored.
func (n *Node) CreateSpace(ctx context.Context, name string, o *CreateOptions) (*space.Genesis, error) {
	if o == nil {
		o = &CreateOptions{}
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	gopts := space.GenesisOptions{Name: name, Founders: append([]string{n.Account()}, o.Founders...),
		Roles: o.Roles, CreatedAt: record.FormatTime(n.now()), Nonce: base64.RawURLEncoding.EncodeToString(nonce[:])}
	var k0 *seal.Key
	if o.Private {
		k0 = seal.NewKey()
		gopts.Private, gopts.EncryptionKeyID = true, k0.ID()
	}
	g, err := space.NewGenesis(gopts)
	if err != nil {
		return nil, err
	}
	if o.Private {
		if err := n.startRing(g, k0); err != nil {
			return nil, err
		}
	}
	if err := n.JoinGenesis(ctx, g); err != nil {
		return nil, err
	}
	if o.Private {
		if err := n.publishMemberKey(ctx, g.ID); err != nil {
			return nil, err
		}
		// K₀ boxed to the account's own member key: its other devices,
		// which derive the same member key, take it from the box.
		if err := n.boxKey(ctx, g.ID, k0, false); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// JoinGenesis keeps a space the node is given by its genesis (checked
// against its id by whoever parsed it): the node stores and follows it,
// and judges what waited for it. Writing in it needs membership, which
// the genesis gives its founders; others join by an invite.
func (n *Node) JoinGenesis(ctx context.Context, g *space.Genesis) error {
	if err := judge.AddGenesis(ctx, n.st, g); err != nil {
		return err
	}
	return n.keep(ctx, g)
}

// writeAccess writes the next version of an access change.
func (n *Node) writeAccess(ctx context.Context, spaceID string, kind space.Kind, key string, body *canonical.Object) (*record.Version, error) {
	return n.w.do(ctx, &writeReq{space: spaceID, collection: kind.Collection(), key: key, body: body, access: true})
}

func rolesValue(roles []string) []any {
	rs := append([]string(nil), roles...)
	sort.Strings(rs)
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// Assign gives a member roles, or changes them (fewer takes roles away):
// sys.assign at member:<owner> (docs/spaces.md).
// It keeps what the member wrote that the node holds (see keepOf).
func (n *Node) Assign(ctx context.Context, spaceID, member string, roles []string) (*record.Version, error) {
	body := canonical.NewObject("member", member, "roles", rolesValue(roles))
	if err := n.addKeep(ctx, spaceID, member, body); err != nil {
		return nil, err
	}
	return n.writeAccess(ctx, spaceID, space.KindAssign, "member:"+record.OwnerPart(member), body)
}

// Remove removes a member: sys.remove at remove:<owner>. It keeps what
// the member wrote that the node holds (see keepOf); leaving keeps all.
func (n *Node) Remove(ctx context.Context, spaceID, member string) (*record.Version, error) {
	body := canonical.NewObject("member", member)
	if err := n.addKeep(ctx, spaceID, member, body); err != nil {
		return nil, err
	}
	v, err := n.writeAccess(ctx, spaceID, space.KindRemove, "remove:"+record.OwnerPart(member), body)
	if err != nil || member == n.Account() || n.keys.Keyring(spaceID) == nil {
		return v, err
	}
	// The removed member holds the key in use: a private space changes it,
	// boxed to the members that remain (docs/private-spaces.md §5).
	if _, err := n.ChangeKey(ctx, spaceID); err != nil {
		return v, fmt.Errorf("minca/node: %s is removed from %s, but its key did not change: %w", member, spaceID, err)
	}
	return v, nil
}

// addKeep sets a removal's or a change of roles' keep: per key of the
// member, per collection, the last log place of theirs this node holds
// (docs/spaces.md, What a change keeps). What the member wrote and the
// writer had seen stays; only what it had not seen can be taken away.
func (n *Node) addKeep(ctx context.Context, spaceID, member string, body *canonical.Object) error {
	keep := map[string]map[string]int64{}
	places := 0
	for v, err := range n.st.Export(ctx, spaceID) {
		if err != nil {
			return err
		}
		if v.Log == nil || space.IsAccessCollection(v.Collection) {
			continue
		}
		root := v.Author
		if v.Proof != nil {
			r, err := n.notes.CheckNote(v.Proof, v.Author, nil, nil)
			if err != nil {
				continue
			}
			root = r
		}
		if root != member {
			continue
		}
		if keep[v.Author] == nil {
			keep[v.Author] = map[string]int64{}
		}
		if p, ok := keep[v.Author][v.Collection]; !ok || v.Log.N > p {
			if !ok {
				places++
			}
			keep[v.Author][v.Collection] = v.Log.N
		}
	}
	if len(keep) == 0 {
		return nil
	}
	if places > space.MaxKeep {
		return writeErr(CodeBadInput, "keep", fmt.Sprintf("the member wrote in %d lines, more than a change keeps (%d)", places, space.MaxKeep))
	}
	ko := &canonical.Object{}
	for _, k := range slices.Sorted(maps.Keys(keep)) {
		co := &canonical.Object{}
		for _, c := range slices.Sorted(maps.Keys(keep[k])) {
			co.Set(c, float64(keep[k][c]))
		}
		ko.Set(k, co)
	}
	body.Set("keep", ko)
	return nil
}

// DefineRole defines or changes a role: sys.role at role:<name>.
func (n *Node) DefineRole(ctx context.Context, spaceID, name string, grants []space.Grant) (*record.Version, error) {
	gs := make([]any, len(grants))
	for i, g := range grants {
		gs[i] = g.Value()
	}
	return n.writeAccess(ctx, spaceID, space.KindRole, "role:"+name, canonical.NewObject("name", name, "grants", gs))
}

// Define writes a collection's definition (02 §6.1): sys.collection at
// collection:<name>, checked first (an invalid definition counts as none).
func (n *Node) Define(ctx context.Context, spaceID string, def any) (*record.Version, error) {
	b, err := asValue(def)
	if err != nil {
		return nil, writeErr(CodeBadInput, "body", err.Error())
	}
	d, err := collection.ParseDefinition(b)
	if err != nil {
		return nil, &WriteError{Code: "definition/invalid", Field: "body", Message: "the definition is not valid (02 §6), and would count as none: " + err.Error()}
	}
	return n.writeAccess(ctx, spaceID, space.KindDefine, collection.KeyPrefix+d.Name, b.(*canonical.Object))
}

// Revoke revokes a key of root: of its versions in each collection, those
// at log places up to cutoffs[collection] are kept, the rest no longer
// count (06 §1.2, §2.9; 03 §6.4): sys.revoke at revoke:<owner of key>.
func (n *Node) Revoke(ctx context.Context, spaceID, key, root string, cutoffs map[string]int64) (*record.Version, error) {
	co := &canonical.Object{}
	names := make([]string, 0, len(cutoffs))
	for c := range cutoffs {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		co.Set(c, float64(cutoffs[c]))
	}
	return n.writeAccess(ctx, spaceID, space.KindRevoke, "revoke:"+record.OwnerPart(key),
		canonical.NewObject("key", key, "root", root, "cutoffs", co))
}

// Members lists a space's members now, with their roles.
func (n *Node) Members(ctx context.Context, spaceID string) ([]space.Member, error) {
	var out []space.Member
	ok, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		out = h.Now().Members()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+spaceID)
	}
	return out, nil
}

// Leave leaves a space: a sys.remove of the account by itself (a founder
// steps down first, docs/spaces.md), then the space is taken off the
// node's lists and the registry's (06 §1.3). Versions kept stay in the
// store.
func (n *Node) Leave(ctx context.Context, spaceID string) error {
	var member, founder bool
	ok, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		st := h.Now()
		member, founder = st.IsMember(n.Account()), st.IsFounder(n.Account())
		return nil
	})
	if err != nil {
		return err
	}
	if !ok {
		return writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+spaceID)
	}
	if spaceID == n.Registry() {
		return writeErr(CodeBadInput, "space", "the account registry is never left")
	}
	if carry, err := n.IsCarrySpace(ctx, spaceID); err != nil {
		return err
	} else if carry {
		return writeErr(CodeBadInput, "space", "a carry space is never left: remove its carrier (06 §4.2)")
	}
	if founder {
		return writeErr(space.CodeAccessFounder, "space", "a founder leaves by stepping down first (sys.stepdown): the account founded "+spaceID)
	}
	if member {
		if _, err := n.Remove(ctx, spaceID, n.Account()); err != nil {
			return fmt.Errorf("minca/node: leaving %s: %w", spaceID, err)
		}
	}
	return n.unkeep(ctx, spaceID)
}
