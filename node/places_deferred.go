package node

import (
	"errors"
	"fmt"
	"os"
)

// UpdateDeferred is Update without waiting for the sync: the places fn
// takes are appended under the lock, and the sync is left to the caller,
// who calls the func returned — from another goroutine, while the next
// Update runs — and lets nothing signed at those places leave (be stored)
// until it returns nil (02 §4.10: a place is written down before the
// version at it leaves, so a crash never gives it again). The places are
// in the log at once, for every process and across a crash of this one;
// the sync is for a crash of the machine, which takes the versions signed
// and not stored with it. The sync covers everything appended so far; a
// log compacted since was written whole and synced.
func (p *Places) UpdateDeferred(fn func(t *PlaceTxn) error) (sync func() error, err error) {
	var f *os.File
	err = p.update(func(t *PlaceTxn) error {
		f = p.f // the file appended to, open under p.mu
		return fn(t)
	}, false)
	if err != nil {
		return nil, err
	}
	return func() error {
		err := f.Sync()
		if errors.Is(err, os.ErrClosed) {
			// Closed since by the next Update: the file was replaced (a
			// compaction, synced whole) or this one closed. Sync the
			// file at the path, as a process opening it afresh would.
			err = syncPath(p.path)
		}
		if err != nil {
			return fmt.Errorf("minca/node: syncing the log places: %w", err)
		}
		return nil
	}, nil
}

func syncPath(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
