package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/engine/internal/keys"
)

// upgrade brings a store of an earlier layout (upgradable and on) up to
// this one in one synced batch: a layout 6 store's waiting versions filed
// under their sources, and the files index of a layout 6 or 7 store built
// from its versions. A store open read-only is brought up in memory only,
// and lists the files it lacks by reading its versions.
func (s *Store) upgrade() error {
	b, err := s.kv.NewBatch()
	readOnly := errors.Is(err, ErrReadOnly)
	if readOnly {
		b, err = discard{}, nil
	}
	if err != nil {
		return err
	}
	defer b.Close()
	if s.st.from == 6 {
		err = s.upgradeWaiting(b)
	} else {
		err = s.loadSources()
	}
	if err != nil {
		return err
	}
	if readOnly {
		s.filesUnindexed = true
	} else if err := s.indexFiles(context.Background(), b); err != nil {
		return fmt.Errorf("minca/engine: upgrading the store's layout: indexing files: %w", err)
	}
	s.st.from = layout
	if err := b.Set(keys.InternalKey(stateName), s.st.encode()); err != nil {
		return err
	}
	if err := b.Commit(Sync); err != nil && !errors.Is(err, ErrReadOnly) {
		return fmt.Errorf("minca/engine: upgrading the store's layout: %w", err)
	}
	return nil
}
