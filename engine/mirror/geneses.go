package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/minca-go/minca/engine"
)

// Geneses is where a store keeps what its versions need beside them that
// is not a version: each space's genesis (docs/spaces.md §1, How a peer
// gets the genesis), kept by the judge's side, not by the engine. With
// Options.Geneses a mirror writes the genesis of every space whose
// versions it exports to the blob store, as geneses/<space id>, before the
// segment that holds them; and on import keeps each genesis there that
// the store lacks before it admits versions, so a store restored from a
// blob store judges what it restores (docs/stores.md, Geneses).
type Geneses interface {
	// Genesis returns the genesis of space as the store holds it, its
	// canonical bytes; ok is false when it holds none.
	Genesis(ctx context.Context, space string) (data []byte, ok bool, err error)
	// KeepGenesis checks data as the genesis of space — its content id
	// must be space — and keeps it, judging what waited for it. A genesis
	// that fails the check is an error wrapping [ErrBadGenesis].
	KeepGenesis(ctx context.Context, space string, data []byte) error
}

// ErrBadGenesis: an object under geneses/ that is not the genesis its
// name says. It is skipped and named on Logger; nothing else stops.
var ErrBadGenesis = errors.New("minca/mirror: not the genesis its name says")

// genesesPrefix is where geneses live in a blob store.
const genesesPrefix = "geneses/"

// GenesisName is the blob name of a space's genesis.
func GenesisName(space string) string { return genesesPrefix + space }

// listGeneses lists the spaces whose genesis the blob store holds.
func (m *Mirror) listGeneses(ctx context.Context) (map[string]bool, error) {
	bs, err := m.listAll(ctx, genesesPrefix, "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(bs))
	for _, b := range bs {
		if sp := strings.TrimPrefix(b.Name, genesesPrefix); !strings.Contains(sp, "/") {
			out[sp] = !b.Pending
		}
	}
	return out, nil
}

// exportGeneses writes the genesis of each space the lines' versions are
// in that the blob store lacks, before the segment holding them.
func (m *Mirror) exportGeneses(ctx context.Context, lines [][]byte) error {
	if m.o.Geneses == nil {
		return nil
	}
	for _, l := range lines {
		var v struct {
			Space string `json:"space"`
		}
		if json.Unmarshal(l, &v) != nil || v.Space == "" || m.genesesOut[v.Space] {
			continue
		}
		if m.genesesOut == nil {
			held, err := m.listGeneses(ctx)
			if err != nil {
				return err
			}
			m.genesesOut = held
			if held[v.Space] {
				continue
			}
		}
		data, ok, err := m.o.Geneses.Genesis(ctx, v.Space)
		if err != nil {
			return fmt.Errorf("minca/mirror: the genesis of %s: %w", v.Space, err)
		}
		m.genesesOut[v.Space] = true
		if !ok {
			continue // a store judged by roots only may hold none
		}
		if err := m.b.Put(ctx, GenesisName(v.Space), data); err != nil && !errors.Is(err, engine.ErrBlobExists) {
			return fmt.Errorf("minca/mirror: writing the genesis of %s: %w", v.Space, err)
		}
	}
	return nil
}

// importGeneses keeps each genesis in the blob store that the store lacks,
// once an import pass, before the pass admits its first version.
func (m *Mirror) importGeneses(ctx context.Context) error {
	if m.o.Geneses == nil || m.genesesIn {
		return nil
	}
	m.genesesIn = true
	listed, err := m.listGeneses(ctx)
	if err != nil {
		return err
	}
	for sp, ready := range listed {
		if !ready {
			continue // a placeholder: a later pass reads it
		}
		if _, ok, err := m.o.Geneses.Genesis(ctx, sp); err != nil {
			return err
		} else if ok {
			continue
		}
		data, err := m.b.Get(ctx, GenesisName(sp))
		if errors.Is(err, engine.ErrBlobNotFound) || errors.Is(err, engine.ErrBlobUnavailable) {
			continue
		}
		if err != nil {
			return fmt.Errorf("minca/mirror: reading the genesis of %s: %w", sp, err)
		}
		if err := m.o.Geneses.KeepGenesis(ctx, sp, data); errors.Is(err, ErrBadGenesis) {
			m.o.Logger.Warn("mirror: an object under geneses/ is not the genesis its name says; skipped", "name", GenesisName(sp), "err", err)
			continue
		} else if err != nil {
			return fmt.Errorf("minca/mirror: keeping the genesis of %s: %w", sp, err)
		}
		m.stats.Geneses++
	}
	return nil
}
