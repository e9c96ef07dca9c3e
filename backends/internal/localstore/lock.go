package localstore

import (
	"os"

	"github.com/gofrs/flock"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/lockholder"
)

// Lock is a store's hold on its lock file.
type Lock struct {
	f *flock.Flock // nil: nothing held (a read-only open that could not take it)
	// recorded: this process wrote itself into the file (an exclusive lock).
	recorded bool
}

// LockFile takes the lock file at path for the store errors name subject
// ([Subject]). For writing, it creates the file (0644, so other
// users can share it for reading) and takes it exclusively. Read-only, it
// writes nothing: it takes an existing lock file shared, so readers exclude
// a writer but not each other; where there is no lock file or it cannot be
// opened for reading (a read-only filesystem, another user's store), it
// holds nothing and the read goes on. A lock held by another opener is an
// error wrapping engine.ErrLocked.
func LockFile(path, subject string, readOnly bool) (*Lock, error) {
	var f *flock.Flock
	var ok bool
	var err error
	if readOnly {
		f = flock.New(path, flock.SetFlag(os.O_RDONLY))
		ok, err = f.TryRLock()
		if err != nil {
			// Not there, or not ours to open: nothing to share.
			return &Lock{}, nil
		}
	} else {
		f = flock.New(path, flock.SetPermissions(0o644))
		ok, err = f.TryLock()
		if err != nil {
			return nil, &engine.StoreError{Subject: subject, Msg: "lock " + path + ": " + OneLine(err.Error()), Err: err}
		}
	}
	if !ok {
		f.Close()
		e := &engine.StoreError{Subject: subject, Msg: "locked: open in another process (or another Open in this one)", Kind: engine.ErrLocked}
		if h, ok := lockholder.Of(path); ok {
			e.Msg, e.Err = "locked: open in "+h.String(), h
		}
		return nil, e
	}
	// Who holds it, for the message of the next one to try.
	recorded := !readOnly && lockholder.Record(path) == nil
	return &Lock{f: f, recorded: recorded}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.recorded {
		_ = lockholder.Clear(l.f.Path())
	}
	return l.f.Unlock()
}
