package node

import (
	"fmt"
	"os"
)

// UpdateDeferred is Update without waiting for the sync: the places fn
// takes are appended under the lock, and the sync is left to the caller,
// who calls the func returned — from another goroutine, while the next
// Update runs — and signs nothing with those places until it returns nil
// (02 §4.10: a place is written down before a version at it is signed, so
// a crash never gives it again). The sync covers everything appended so
// far; a log compacted since was written whole and synced.
func (p *Places) UpdateDeferred(fn func(t *PlaceTxn) error) (sync func() error, err error) {
	if err := p.update(fn, false); err != nil {
		return nil, err
	}
	return func() error {
		f, err := os.OpenFile(p.path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("minca/node: syncing the log places: %w", err)
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("minca/node: syncing the log places: %w", err)
		}
		return nil
	}, nil
}
