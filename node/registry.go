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
	"github.com/minca-go/minca/space"
)

// The account registry (06 §1.3) in our profile: a space that admits only
// the account itself, whose genesis every device of the account derives
// the same way, holding one sys.joined record per space the account uses,
// keyed "space:<id>", body {space, name, genesis}. A record counts only
// under a note granting /account/write (the judge's 02 §9.4 step 2). It is
// public until the node can seal bodies (docs/private-spaces.md), and
// shared only with the account's own devices.
const (
	// JoinedCollection holds the account's spaces.
	JoinedCollection = "sys.joined"
	joinedPrefix     = "space:"
	registryCreated  = "2026-01-01T00:00:00.000Z"
	registryNonce    = "minca/account-registry/v1"
	spacesMeta       = "node/spaces"
)

// RegistryGenesis is the genesis of an account's registry: the same on
// every device, so they all hold one space.
func RegistryGenesis(account string) (*space.Genesis, error) {
	return space.NewGenesis(space.GenesisOptions{Name: "account", Founders: []string{account},
		CreatedAt: registryCreated, Nonce: registryNonce, Account: true})
}

// Registry is the id of the account registry this node keeps; "" without
// the account key (06 §1.3: such a node never writes it).
func (n *Node) Registry() string { return n.registry }

// keepRegistry keeps the account registry's genesis, and the genesis of
// every space it lists, so the node follows the account's spaces.
func (n *Node) keepRegistry(ctx context.Context) error {
	g, err := RegistryGenesis(n.account.DID())
	if err != nil {
		return err
	}
	if _, ok, err := GenesisOf(ctx, n.st, g.ID); err != nil {
		return err
	} else if !ok {
		if err := AddGenesis(ctx, n.st, g); err != nil {
			return err
		}
	}
	return n.followRegistry(ctx)
}

// followRegistry keeps the genesis of each space the registry lists.
func (n *Node) followRegistry(ctx context.Context) error {
	joined, err := n.joined(ctx)
	if err != nil {
		return err
	}
	for _, j := range joined {
		g, ok, err := GenesisOf(ctx, n.st, j.id)
		if err != nil {
			return err
		}
		if !ok {
			if j.genesis == nil {
				continue
			}
			if err := AddGenesis(ctx, n.st, j.genesis); err != nil {
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
	reg := n.Registry()
	if reg == "" {
		return nil, nil
	}
	// A carry space is never one the account uses (06 §4.2).
	carry, err := n.carrySpaces(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []joinedSpace
	for v, err := range n.st.Export(ctx, reg) {
		if err != nil {
			return nil, err
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
			return nil, err
		}
		if cur.Deleted {
			continue
		}
		id := strings.TrimPrefix(cur.Key, joinedPrefix)
		j := joinedSpace{id: id}
		if o, ok := cur.Body.(*canonical.Object); ok {
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
	return out, nil
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
		if g, ok, err := GenesisOf(ctx, n.st, id); err != nil {
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
	_, err = n.w.do(ctx, &writeReq{space: reg, collection: JoinedCollection, key: joinedPrefix + g.ID, body: body, sys: true})
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
