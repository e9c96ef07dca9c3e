// Package memory is an in-memory [engine.KV] for tests and the memory: store
// URL. It holds everything in a skip list; nothing survives Close. Commits
// are atomic (durability is meaningless here).
package memory

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/minca-go/minca/engine"
)

// Store is an in-memory ordered key-value store.
type Store struct {
	mu     sync.RWMutex
	data   *list
	closed bool
}

var _ engine.KV = (*Store)(nil)

// Options configures Open; there are none yet.
type Options struct{}

// Open returns an empty store.
func Open(opts *Options) *Store { return &Store{data: newList(1)} }

// Get returns a copy of the value at key.
func (s *Store) Get(key []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, engine.ErrClosed
	}
	n, ok := s.data.get(key)
	if !ok {
		return nil, fmt.Errorf("%w: key %x", engine.ErrNotFound, key)
	}
	return bytes.Clone(n.val), nil
}

// GetMany calls found for each of keys that is held, under one read lock.
func (s *Store) GetMany(keys [][]byte, found func(i int, value []byte)) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return engine.ErrClosed
	}
	for i, k := range keys {
		if n, ok := s.data.get(k); ok {
			found(i, n.val)
		}
	}
	return nil
}

// NewIter iterates [lower, upper). Each step re-seeks past the last key, so
// it sees whole commits made while it runs, never half of one.
func (s *Store) NewIter(lower, upper []byte) (engine.Iterator, error) {
	return &iter{s: s, lower: bytes.Clone(lower), upper: bytes.Clone(upper)}, nil
}

// NewBatch starts a batch.
func (s *Store) NewBatch() (engine.Batch, error) {
	return &batch{s: s, w: newList(2)}, nil
}

// Close drops everything.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.data = newList(1)
	return nil
}

type iter struct {
	s            *Store
	lower, upper []byte
	last         []byte
	started      bool
	k, v         []byte
	err          error
}

func (it *iter) Next() bool {
	it.s.mu.RLock()
	defer it.s.mu.RUnlock()
	if it.s.closed {
		it.err = engine.ErrClosed
		return false
	}
	var n *node
	if !it.started {
		n = it.s.data.seek(it.lower, nil)
		it.started = true
	} else if it.last != nil {
		n = it.s.data.after(it.last)
	}
	if n == nil || (it.upper != nil && bytes.Compare(n.key, it.upper) >= 0) {
		it.last, it.k, it.v = nil, nil, nil
		return false
	}
	it.k, it.v = n.key, n.val
	it.last = n.key
	return true
}

func (it *iter) Key() []byte   { return it.k }
func (it *iter) Value() []byte { return it.v }
func (it *iter) Err() error    { return it.err }
func (it *iter) Close() error  { return nil }

// batch keeps its writes in a list of its own, applied under the store's
// lock on commit.
type batch struct {
	s    *Store
	w    *list
	done bool
}

func (b *batch) Set(key, value []byte) error {
	b.w.put(bytes.Clone(key), bytes.Clone(value), false)
	return nil
}

func (b *batch) Delete(key []byte) error {
	b.w.put(bytes.Clone(key), nil, true)
	return nil
}

// Commit applies the batch atomically; d means nothing in memory.
func (b *batch) Commit(d engine.Durability) error {
	if b.done {
		return fmt.Errorf("memory: batch already committed")
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if b.s.closed {
		return engine.ErrClosed
	}
	for n := b.w.head.next[0]; n != nil; n = n.next[0] {
		if n.del {
			b.s.data.remove(n.key)
		} else {
			b.s.data.put(n.key, n.val, false)
		}
	}
	b.done = true
	return nil
}

func (b *batch) Close() error { b.done = true; return nil }
