package main

import (
	"context"
	"errors"

	"github.com/minca-go/minca/store"
)

// storeURLHelp describes the store URLs openStore takes.
const storeURLHelp = store.URLForms

// storeAccess is how a verb opens its store: only a verb that writes
// creates one, and a verb that only reads opens it read-only.
type storeAccess int

const (
	readStore   storeAccess = iota // must exist; read only (get, history, export, stats, check)
	useStore                       // must exist; read and write (backup, compact: the mirror's state)
	createStore                    // made where there is none (import, restore --store, mirror)
)

// openStore opens the store a URL names (store.Open), with the node's
// judge. A missing store is an error wrapping engine.ErrNoStore (exit 3);
// a bad URL is bad usage.
func openStore(ctx context.Context, url string, a storeAccess) (*store.Store, error) {
	if url == "" {
		return nil, usageError("--store URL is required (%s)", storeURLHelp)
	}
	st, err := store.Open(ctx, url, &store.Options{Judge: defaultJudge(), Create: a == createStore, ReadOnly: a == readStore})
	return st, usageIfBadURL(err)
}

// usageIfBadURL makes a bad store URL a usage error (exit 2).
func usageIfBadURL(err error) error {
	if errors.Is(err, store.ErrBadURL) {
		return &exitError{code: exitUsage, err: err}
	}
	return err
}
