package localstore

import (
	"fmt"
	"strings"

	"github.com/minca-go/minca/engine"
)

// noStore is engine.ErrNoStore with the path as given: its text is what a
// user reads ("no store at dbb").
type noStore struct{ path string }

func (e noStore) Error() string { return "no store at " + e.path }
func (e noStore) Unwrap() error { return engine.ErrNoStore }

// NoStore is the error of an open that must find a store at path and finds
// none; it wraps engine.ErrNoStore.
func NoStore(path string) error { return noStore{path} }

// Corrupt is the error of damage found in a store: it wraps
// engine.ErrCorrupt and names the backend's kind, the store's path and
// what is damaged, on one line.
func Corrupt(kind, store, what string) error {
	return fmt.Errorf("%w: %s store %s: %s", engine.ErrCorrupt, kind, store, OneLine(what))
}

// OneLine is s up to its first line break: errors from the storage
// libraries may carry details or stack traces on further lines, and an
// error here is one line.
func OneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// Wrap names the store in an error from its storage library, on one line
// (see OneLine); errors.Is and errors.As still see err.
func Wrap(kind, store string, err error) error {
	if err == nil {
		return nil
	}
	return &wrapped{msg: fmt.Sprintf("%s store %s: %s", kind, store, OneLine(err.Error())), err: err}
}

type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
