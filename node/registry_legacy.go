package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// The account registry as earlier mincas kept it: a public space whose id
// anyone derives from the account's DID (docs/private-spaces.md §15,
// Migration). A node opening a store that holds one copies what it lists
// into the private registry once; it serves the old one to no one but the
// account's own devices and the keepers it names (an account space,
// docs/sync.md §7.2) and writes nothing more there.
const (
	legacyRegistryNonce = "minca/account-registry/v1"
	// migratedMeta records that the public registry was copied (its id),
	// or that there was none to copy (""): the copy is made once, so a
	// record deleted from the private registry since is not brought back.
	migratedMeta = "node/registry-migrated"
)

// LegacyRegistryGenesis is the genesis of the public account registry of
// earlier mincas: founded by the account alone, named "account", nonce
// "minca/account-registry/v1", public — computed from the account's DID
// alone, which every peer it connects to sees in its who note.
func LegacyRegistryGenesis(account string) (*space.Genesis, error) {
	return space.NewGenesis(space.GenesisOptions{Name: registryName, Founders: []string{account},
		CreatedAt: registryCreated, Nonce: legacyRegistryNonce, Account: true})
}

// migrateRegistry copies into the private registry, once, the current
// records of a public registry the store holds: each sys.joined,
// sys.carrier, sys.automation, sys.link and other record that is not a
// delete, at its key, sealed; each sys.revoke, as the account's revocation
// there; none where the private registry already holds a version of that
// key. The other access changes (keepers above all) are the private
// registry's own: the node names its carriers keepers again.
func (n *Node) migrateRegistry(ctx context.Context) error {
	if _, done, err := n.st.Meta(ctx, migratedMeta); err != nil || done {
		return err
	}
	old, err := LegacyRegistryGenesis(n.account.DID())
	if err != nil {
		return err
	}
	_, held, err := judge.GenesisOf(ctx, n.st, old.ID)
	if err != nil {
		return err
	}
	copied, skipped := 0, 0
	if held {
		if copied, skipped, err = n.copyRegistry(ctx, old.ID); err != nil {
			return fmt.Errorf("minca/node: copying the public account registry %s into the private one: %w", old.ID, err)
		}
		n.o.Logger.Info("the account registry is private now: copied the public one's records", "from", old.ID, "to", n.registry,
			"records", copied, "skipped", skipped)
	} else {
		old = &space.Genesis{}
	}
	return n.st.SetMeta(ctx, migratedMeta, []byte(old.ID))
}

// copyRegistry writes what the public registry from lists into the
// private one; a record the judge refuses is logged and skipped.
func (n *Node) copyRegistry(ctx context.Context, from string) (copied, skipped int, err error) {
	seen := map[string]bool{}
	for v, err := range n.st.Export(ctx, from) {
		if err != nil {
			return copied, skipped, err
		}
		if seen[v.Key] {
			continue
		}
		seen[v.Key] = true
		cur, err := n.st.Current(ctx, from, v.Key)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return copied, skipped, err
		}
		if cur.Deleted || space.IsAccessCollection(cur.Collection) && cur.Collection != space.KindRevoke.Collection() {
			continue
		}
		if hs, err := n.st.History(ctx, n.registry, cur.Key); err != nil {
			return copied, skipped, err
		} else if len(hs) > 0 {
			continue
		}
		body, ok := cur.Body.(*canonical.Object)
		if !ok {
			skipped++
			continue
		}
		if cur.Collection == space.KindRevoke.Collection() {
			_, err = n.writeAccess(ctx, n.registry, space.KindRevoke, cur.Key, body)
		} else {
			_, err = n.w.do(ctx, &writeReq{space: n.registry, collection: cur.Collection, key: cur.Key, body: body,
				sys: record.IsSys(cur.Collection), sealWith: n.registryKey})
		}
		var we *WriteError
		switch {
		case errors.As(err, &we):
			n.o.Logger.Warn("not copying a record of the public account registry", "key", cur.Key, "err", err)
			skipped++
		case err != nil:
			return copied, skipped, err
		default:
			copied++
		}
	}
	return copied, skipped, nil
}
