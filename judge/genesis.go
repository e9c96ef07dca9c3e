package judge

import (
	"context"
	"fmt"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/space"
)

// genesisMeta names the meta value a space's genesis is kept under, beside
// the store's versions (docs/spaces.md, How a peer gets the genesis).
func genesisMeta(spaceID string) string { return "space/genesis/" + spaceID }

// AddGenesis stores a space's genesis with the store, and re-judges the
// space's versions that were waiting for it (02 §9.5). g must have been
// read with space.ParseGenesisFor (checked against the id it was given
// for) or made by space.NewGenesis. Adding one already held changes
// nothing and wakes its waiters again, so a crash between the two steps is
// mended by adding it again.
func AddGenesis(ctx context.Context, st *engine.Store, g *space.Genesis) error {
	if err := st.SetMeta(ctx, genesisMeta(g.ID), g.Canonical()); err != nil {
		return fmt.Errorf("minca/judge: storing the genesis of %s: %w", g.ID, err)
	}
	if err := st.Wake(ctx, g.Digest()); err != nil {
		return fmt.Errorf("minca/judge: judging what waited for the genesis of %s: %w", g.ID, err)
	}
	return nil
}

// GenesisOf returns a space's genesis as the store holds it; ok is false
// when it holds none.
func GenesisOf(ctx context.Context, st interface {
	Meta(ctx context.Context, name string) ([]byte, bool, error)
}, spaceID string) (*space.Genesis, bool, error) {
	b, ok, err := st.Meta(ctx, genesisMeta(spaceID))
	if err != nil || !ok {
		return nil, false, err
	}
	g, err := space.ParseGenesisFor(spaceID, b)
	if err != nil {
		return nil, false, fmt.Errorf("%w: the genesis stored for %s: %v", engine.ErrCorrupt, spaceID, err)
	}
	return g, true, nil
}

// MirrorGeneses is how a store's mirrors carry its spaces' geneses beside
// their segments (mirror.Options.Geneses; docs/stores.md, Geneses): read
// as GenesisOf reads them, kept as AddGenesis keeps them, once checked
// against the space id their name gives (genesis/id).
func MirrorGeneses(st *engine.Store) mirror.Geneses { return mirrorGeneses{st} }

type mirrorGeneses struct{ st *engine.Store }

func (m mirrorGeneses) Genesis(ctx context.Context, spaceID string) ([]byte, bool, error) {
	return m.st.Meta(ctx, genesisMeta(spaceID))
}

func (m mirrorGeneses) KeepGenesis(ctx context.Context, spaceID string, data []byte) error {
	g, err := space.ParseGenesisFor(spaceID, data)
	if err != nil {
		return fmt.Errorf("%w: %v", mirror.ErrBadGenesis, err)
	}
	return AddGenesis(ctx, m.st, g)
}
