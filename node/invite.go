package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// InvitePrefix starts every invite's text. An invite, in our profile, is
// handed over as text: "minca-invite:" and base64url (no padding) of the canonical JSON
//
//	{"v": 1, "genesis": {…}, "key": base64url(PKCS #8 of the invite key),
//	 "roles": [role…], "history": [access change…], "spaceKey"?: {keyId, key}}
//
// spaceKey is a private space's key in use when the invite was made (06
// §1.3, §4.3; docs/private-spaces.md §8), absent for a public space.
//
// The invite key is the key the space's sys.invite names (docs/spaces.md);
// whoever holds it may join once, for those roles, by a sys.assign the key
// signs for (space.JoinProof). history is the space's access changes the
// inviter holds, the open invite among them, so the one joining can judge
// its own join before the space syncs. Whoever holds the text may join:
// hand it over as a secret.
const InvitePrefix = "minca-invite:"

// MaxInviteHistory bounds the access changes an invite carries.
const MaxInviteHistory = 4096

// Invite opens an invite to a space for roles: a new invite key, the
// sys.invite naming it, and the text to hand over.
func (n *Node) Invite(ctx context.Context, spaceID string, roles []string) (string, error) {
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	ik, err := identity.NewPrivateKey(ek)
	if err != nil {
		return "", err
	}
	g, ok, err := judge.GenesisOf(ctx, n.st, spaceID)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+spaceID)
	}
	sk, err := n.inviteKey(ctx, g)
	if err != nil {
		return "", err
	}
	if sk != nil {
		if err := n.BoxMissing(ctx, spaceID); err != nil {
			return "", err
		}
	}
	if _, err := n.writeAccess(ctx, spaceID, space.KindInvite, "invite:"+record.OwnerPart(ik.DID()),
		canonical.NewObject("key", ik.DID(), "roles", rolesValue(roles))); err != nil {
		return "", err
	}
	var hist []any
	for it, err := range n.st.SyncOrder(ctx, spaceID, engine.SyncKey{}) {
		if err != nil {
			return "", err
		}
		if !space.IsAccessCollection(it.Collection) {
			continue
		}
		if len(hist) == MaxInviteHistory {
			return "", fmt.Errorf("minca/node: the space's access history is longer than an invite carries (%d changes)", MaxInviteHistory)
		}
		v, err := n.st.Version(ctx, it.Digest)
		if err != nil {
			return "", err
		}
		hist = append(hist, v.Object())
	}
	der, err := x509.MarshalPKCS8PrivateKey(ek)
	if err != nil {
		return "", err
	}
	io := canonical.NewObject("v", float64(1), "genesis", g.Object(),
		"key", base64.RawURLEncoding.EncodeToString(der), "roles", rolesValue(roles), "history", hist)
	if sk != nil {
		io.Set("spaceKey", sk)
	}
	return space.EncodeInviteText(InvitePrefix, io)
}

// parsedInvite is an invite read back.
type parsedInvite struct {
	g       *space.Genesis
	key     *identity.PrivateKey
	roles   []string
	history []*record.Version
	// spaceKey is a private space's key in use; nil for a public space.
	spaceKey *seal.Key
}

func parseInvite(text string) (*parsedInvite, error) {
	bad := func(msg string) (*parsedInvite, error) {
		return nil, writeErr(CodeBadInput, "invite", "not an invite: "+msg)
	}
	o, g, sk, err := space.DecodeInviteText(text, InvitePrefix, "spaceKey", "key", "roles", "history")
	if err != nil {
		return bad(err.Error())
	}
	kv, _ := o.Get("key")
	ks, _ := kv.(string)
	der, err := base64.RawURLEncoding.DecodeString(ks)
	if err != nil {
		return bad("key: base64url: " + err.Error())
	}
	pk, err := x509.ParsePKCS8PrivateKey(der)
	ek, isEC := pk.(*ecdsa.PrivateKey)
	if err != nil || !isEC || ek.Curve != elliptic.P256() {
		return bad("key: a P-256 private key in PKCS #8")
	}
	ik, err := identity.NewPrivateKey(ek)
	if err != nil {
		return bad("key: " + err.Error())
	}
	p := &parsedInvite{g: g, key: ik, spaceKey: sk}
	rv, _ := o.Get("roles")
	rs, ok := rv.([]any)
	if !ok || len(rs) > space.MaxRoles {
		return bad("roles is a list of role names")
	}
	for _, r := range rs {
		s, ok := r.(string)
		if !ok || !space.ValidRoleName(s) {
			return bad("roles is a list of role names")
		}
		p.roles = append(p.roles, s)
	}
	hv, _ := o.Get("history")
	hs, ok := hv.([]any)
	if !ok || len(hs) > MaxInviteHistory {
		return bad(fmt.Sprintf("history is a list of at most %d versions", MaxInviteHistory))
	}
	for i, h := range hs {
		ver, err := record.FromValue(h)
		if err != nil {
			return bad(fmt.Sprintf("history[%d]: %v", i, err))
		}
		if ver.Space != g.ID || !space.IsAccessCollection(ver.Collection) {
			return bad(fmt.Sprintf("history[%d] is not an access change of the space", i))
		}
		p.history = append(p.history, ver)
	}
	return p, nil
}

// JoinInvite joins a space by an invite's text (see [Node.Invite]): the
// node keeps the space's genesis, admits the access changes the invite
// carries through its judge, and writes the account's sys.assign by the
// invite, signed for by the invite key, unless the account is in the space
// already with the invite's roles (see hasRoles). It returns the space's
// genesis.
func (n *Node) JoinInvite(ctx context.Context, text string) (*space.Genesis, error) {
	p, err := parseInvite(text)
	if err != nil {
		return nil, err
	}
	if p.spaceKey != nil {
		had := false
		if r := n.keys.Keyring(p.g.ID); r != nil {
			_, had = r.Key(p.spaceKey.ID())
		}
		if !had {
			// What the node held of the space without this key was indexed
			// sealed: it is indexed again, opened.
			if held, err := n.holds(ctx, p.g.ID); err != nil {
				return nil, err
			} else if held {
				defer n.reindexSoon()
			}
		}
		if err := n.startRing(p.g, p.spaceKey); err != nil {
			return nil, err
		}
	}
	if err := judge.AddGenesis(ctx, n.st, p.g); err != nil {
		return nil, err
	}
	if len(p.history) > 0 {
		if _, err := n.st.Admit(ctx, "invite", p.history); err != nil {
			return nil, err
		}
	}
	if p.spaceKey != nil {
		// The key change that made the invite's key is in its history:
		// with it come every earlier key (docs/private-spaces.md §5, §8).
		if _, err := n.takeKeys(ctx, p.g.ID, p.spaceKey.ID()); err != nil {
			return nil, err
		}
	}
	me := n.Account()
	in, err := n.hasRoles(ctx, p.g.ID, me, p.roles)
	if err != nil {
		return nil, err
	}
	if !in {
		sig, err := p.key.Sign(space.JoinProof(p.g.ID, p.key.DID(), me))
		if err != nil {
			return nil, err
		}
		body := canonical.NewObject("member", me, "roles", rolesValue(p.roles),
			"invite", canonical.NewObject("key", p.key.DID(), "sig", base64.RawURLEncoding.EncodeToString(sig)))
		if _, err := n.writeAccess(ctx, p.g.ID, space.KindAssign, "member:"+record.OwnerPart(me), body); err != nil {
			return nil, fmt.Errorf("minca/node: joining %s: %w", p.g.ID, err)
		}
	}
	if p.spaceKey != nil {
		if err := n.publishMemberKey(ctx, p.g.ID); err != nil {
			return nil, err
		}
	}
	return p.g, n.keep(ctx, p.g)
}

// hasRoles reports whether root is a founder of the space, or a member
// holding every one of roles, as of the access history the node holds.
// An account already in a space with what an invite gives writes no join
// of its own: a device of its, or a program it connected by code (whose
// records-only note may not write sys.assign, 06 §3), that is handed an
// invite to one of the account's spaces just keeps the space.
func (n *Node) hasRoles(ctx context.Context, spaceID, root string, roles []string) (bool, error) {
	in := false
	_, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		st := h.Now()
		if st.IsFounder(root) {
			in = true
			return nil
		}
		if !st.IsMember(root) {
			return nil
		}
		held := st.Roles(root)
		in = true
		for _, r := range roles {
			in = in && slices.Contains(held, r)
		}
		return nil
	})
	return in, err
}

// JoinGenesisJSON keeps a space given by its genesis as JSON text, checked
// against id when id is not empty.
func (n *Node) JoinGenesisJSON(ctx context.Context, id string, data []byte) (*space.Genesis, error) {
	var g *space.Genesis
	var err error
	if id != "" {
		g, err = space.ParseGenesisFor(id, data)
	} else {
		g, err = space.ParseGenesis(data)
	}
	if err != nil {
		return nil, err
	}
	return g, n.JoinGenesis(ctx, g)
}
