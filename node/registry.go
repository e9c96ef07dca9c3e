package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// The account registry (06 §1.3) in our profile (docs/private-spaces.md
// §15): a private space that admits only the account itself, whose
// genesis and only key every device holding the account key derives the
// same way and nobody else can, holding one sys.joined record per space the
// account uses, keyed "space:<id>", body {space, name, genesis}, sealed
// under its key. A record counts only under a note granting /account/write
// (the judge's 02 §9.4 step 2). Only the account's devices and the keepers
// it names (its carriers) read it (docs/sync.md §7.2).
const (
	// JoinedCollection holds the account's spaces.
	JoinedCollection = "sys.joined"
	joinedPrefix     = "space:"
	registryName     = "account"
	registryCreated  = "2026-01-01T00:00:00.000Z"
	registryNonce    = "minca/account-registry/v2"
	registryKeyInfo  = "minca/registry-key/v1"
	spacesMeta       = "node/spaces"
)

// RegistrySpace derives the account registry (06 §1.3;
// docs/private-spaces.md §15): its first and only key K₀ is HKDF-SHA-256
// of the account key's scalar with info "minca/registry-key/v1", and its
// genesis is private and the account's own, founded by the account alone,
// named "account", with nonce "minca/account-registry/v2" and K₀'s keyId.
// Every device holding the account key derives the same space; nobody
// else can compute its id, which depends on K₀.
func RegistrySpace(account *identity.PrivateKey) (*space.Genesis, *seal.Key, error) {
	secret := account.DeriveSecret(registryKeyInfo)
	k, err := seal.KeyFromBytes(secret[:])
	if err != nil {
		return nil, nil, err
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: registryName, Private: true, Founders: []string{account.DID()},
		CreatedAt: registryCreated, Nonce: registryNonce, Account: true, EncryptionKeyID: k.ID()})
	if err != nil {
		return nil, nil, err
	}
	return g, k, nil
}

// Registry is the id of the account registry this node keeps; "" without
// the account key (06 §1.3: such a node never writes it).
func (n *Node) Registry() string { return n.registry }

// keepRegistry keeps the account registry's genesis, and the genesis of
// every space it lists, so the node follows the account's spaces.
func (n *Node) keepRegistry(ctx context.Context) error {
	g, k := n.registryG, n.registryKey
	if _, ok, err := judge.GenesisOf(ctx, n.st, g.ID); err != nil {
		return err
	} else if !ok {
		if err := judge.AddGenesis(ctx, n.st, g); err != nil {
			return err
		}
	}
	// A ring too, so the node's reads and queries open the registry as
	// any private space's (node/private.go).
	if r, err := n.keys.load(g.ID); err != nil {
		return err
	} else if _, has := ringKey(r, k.ID()); !has {
		if err := n.startRing(g, k); err != nil {
			return err
		}
	}
	if err := n.migrateRegistry(ctx); err != nil {
		return err
	}
	return n.followRegistry(ctx)
}

// registryBody is a registry version's body, opened under the registry's
// key; ok is false for a delete, a stub, or a body that does not open
// (which the judge refused, or a key change not this profile's made).
func (n *Node) registryBody(v *record.Version) (any, bool) {
	if !v.HasBody || v.Deleted {
		return nil, false
	}
	o, err := seal.OpenBody(n.registryKey, n.registry, v.Collection, v.Key, v.Body)
	if err != nil {
		return nil, false
	}
	return o.Body, true
}

// followRegistry keeps the genesis of each space the registry lists.
func (n *Node) followRegistry(ctx context.Context) error {
	joined, err := n.joined(ctx)
	if err != nil {
		return err
	}
	for _, j := range joined {
		g, ok, err := judge.GenesisOf(ctx, n.st, j.id)
		if err != nil {
			return err
		}
		if !ok {
			if j.genesis == nil {
				continue
			}
			if err := judge.AddGenesis(ctx, n.st, j.genesis); err != nil {
				return err
			}
			g = j.genesis
		}
		if err := n.adoptKeys(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

type joinedSpace struct {
	id, name string
	genesis  *space.Genesis
}

// joined lists the spaces the registry lists: each sys.joined record whose
// readable current version stands, is not a delete and is the account's.
func (n *Node) joined(ctx context.Context) ([]joinedSpace, error) {
	out, _, err := n.joinedAndLeft(ctx)
	return out, err
}

// joinedAndLeft is joined, and the ids of the spaces the registry shows
// the account left: each sys.joined record whose current version is a
// delete.
func (n *Node) joinedAndLeft(ctx context.Context) (out []joinedSpace, left []string, err error) {
	reg := n.Registry()
	if reg == "" {
		return nil, nil, nil
	}
	// A carry space is never one the account uses (06 §4.2).
	carry, err := n.carrySpaces(ctx)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for v, err := range n.st.Export(ctx, reg) {
		if err != nil {
			return nil, nil, err
		}
		if v.Collection != JoinedCollection || seen[v.Key] || carry[strings.TrimPrefix(v.Key, joinedPrefix)] {
			continue
		}
		seen[v.Key] = true
		cur, err := n.st.Current(ctx, reg, v.Key)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if cur.Deleted {
			left = append(left, strings.TrimPrefix(cur.Key, joinedPrefix))
			continue
		}
		id := strings.TrimPrefix(cur.Key, joinedPrefix)
		j := joinedSpace{id: id}
		body, _ := n.registryBody(cur)
		if o, ok := body.(*canonical.Object); ok {
			if s, ok := o.Get("name"); ok {
				j.name, _ = s.(string)
			}
			if gv, ok := o.Get("genesis"); ok {
				if g, err := space.GenesisFromValue(gv); err == nil && g.ID == id {
					j.genesis = g
				}
			}
		}
		out = append(out, j)
	}
	return out, left, nil
}

// SpaceInfo is a space the node keeps.
type SpaceInfo struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Visibility string `json:"visibility"`
	// Registry is true for the account registry.
	Registry bool `json:"registry,omitempty"`
}

// Spaces lists the spaces the node keeps (06 §1.3): with the account key,
// the account registry and the spaces it lists; without, the spaces the
// node was given or joined itself.
func (n *Node) Spaces(ctx context.Context) ([]SpaceInfo, error) {
	var ids []string
	if reg := n.Registry(); reg != "" {
		ids = append(ids, reg)
		js, err := n.joined(ctx)
		if err != nil {
			return nil, err
		}
		for _, j := range js {
			ids = append(ids, j.id)
		}
	} else {
		local, err := n.localSpaces(ctx)
		if err != nil {
			return nil, err
		}
		ids = local
	}
	out := make([]SpaceInfo, 0, len(ids))
	reg := n.Registry()
	for _, id := range ids {
		info := SpaceInfo{ID: id, Registry: id == reg}
		if g, ok, err := judge.GenesisOf(ctx, n.st, id); err != nil {
			return nil, err
		} else if ok {
			info.Name, info.Visibility = g.Name, g.Visibility
		}
		out = append(out, info)
	}
	return out, nil
}

// localSpaces is the node's own list of the spaces it was given.
func (n *Node) localSpaces(ctx context.Context) ([]string, error) {
	b, ok, err := n.st.Meta(ctx, spacesMeta)
	if err != nil || !ok {
		return nil, err
	}
	var ids []string
	if err := json.Unmarshal(b, &ids); err != nil {
		return nil, fmt.Errorf("%w: the node's list of spaces: %v", engine.ErrCorrupt, err)
	}
	return ids, nil
}

// keep adds a space to the node's lists: its own, and with the account
// key the registry's sys.joined (06 §1.3).
func (n *Node) keep(ctx context.Context, g *space.Genesis) error {
	ids, err := n.localSpaces(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(ids, g.ID) {
		b, _ := json.Marshal(append(ids, g.ID))
		if err := n.st.SetMeta(ctx, spacesMeta, b); err != nil {
			return err
		}
	}
	reg := n.Registry()
	if reg == "" || reg == g.ID {
		return nil
	}
	body := canonical.NewObject("space", g.ID, "name", g.Name, "genesis", g.Object())
	_, err = n.w.do(ctx, &writeReq{space: reg, collection: JoinedCollection, key: joinedPrefix + g.ID, body: body, sys: true, sealWith: n.registryKey})
	return err
}

// unkeep takes a space off the node's lists.
func (n *Node) unkeep(ctx context.Context, id string) error {
	ids, err := n.localSpaces(ctx)
	if err != nil {
		return err
	}
	if i := slices.Index(ids, id); i >= 0 {
		b, _ := json.Marshal(slices.Delete(ids, i, i+1))
		if err := n.st.SetMeta(ctx, spacesMeta, b); err != nil {
			return err
		}
	}
	reg := n.Registry()
	if reg == "" {
		return nil
	}
	_, err = n.w.do(ctx, &writeReq{space: reg, key: joinedPrefix + id, del: true, sys: true})
	var we *WriteError
	if errors.As(err, &we) && we.Code == CodeNotFound {
		return nil
	}
	return err
}

// ringKey looks a key up in a ring that may be nil.
func ringKey(r *seal.Keyring, id string) (*seal.Key, bool) {
	if r == nil {
		return nil, false
	}
	return r.Key(id)
}

// RegistryUnsynced reports whether the account registry names no keeper
// yet: a device new to the account, which learns its carriers from the
// registry itself, or an account that never used one. Until it does, the
// node lets any peer that asks for the registry by its id sync it
// (docs/sync.md §7.2): only the account's devices and its carriers know
// that id, and the carriers come to be named keepers by what they bring.
func (n *Node) RegistryUnsynced(ctx context.Context) (bool, error) {
	if n.registry == "" {
		return false, nil
	}
	hs, err := n.st.History(ctx, n.registry, keepersKey)
	return len(hs) == 0, err
}
