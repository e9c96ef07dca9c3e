package localstore

import (
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
// what is damaged, on one line: "pebble store db: damaged: what"
// (an [engine.StoreError], so an opener can name the store its own way).
func Corrupt(kind, store, what string) error {
	return &engine.StoreError{Subject: Subject(kind, store), Msg: "damaged: " + OneLine(what), Kind: engine.ErrCorrupt}
}

// Subject is how errors name a store of a backend: "pebble store PATH".
func Subject(kind, store string) string { return kind + " store " + store }

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
	return &engine.StoreError{Subject: Subject(kind, store), Msg: OneLine(err.Error()), Err: err}
}
