package store

import "github.com/minca-go/minca/engine"

// readOnlyKV is a KV opened to read: every batch is refused with
// [engine.ErrReadOnly], whatever the backend would allow, so a store
// opened ReadOnly refuses writes the same way on every backend (and an
// index that is a cache is never written through the caller's engine).
type readOnlyKV struct {
	engine.KV
	url string
}

func (k readOnlyKV) NewBatch() (engine.Batch, error) {
	return nil, engine.Errorf(engine.ErrReadOnly, "store %s is open read-only", k.url)
}

// keepOpen lends a KV to an engine that must not close it.
type keepOpen struct{ engine.KV }

func (keepOpen) Close() error { return nil }
