package memory

import (
	"bytes"

	"github.com/minca-go/minca/engine"
)

var _ engine.ReverseReader = (*Store)(nil)

// NewReverseIter iterates [lower, upper) in descending order. Each step
// re-seeks before the last key, so it sees whole commits made while it
// runs, never half of one.
func (s *Store) NewReverseIter(lower, upper []byte) (engine.Iterator, error) {
	return &reverseIter{s: s, lower: bytes.Clone(lower), upper: bytes.Clone(upper)}, nil
}

type reverseIter struct {
	s            *Store
	lower, upper []byte
	last         []byte // nil before the first step
	done         bool
	k, v         []byte
	err          error
}

func (it *reverseIter) Next() bool {
	it.s.mu.RLock()
	defer it.s.mu.RUnlock()
	if it.s.closed {
		it.err = engine.ErrClosed
		return false
	}
	if it.done {
		return false
	}
	bound := it.upper
	if it.last != nil {
		bound = it.last
	}
	n := it.s.data.before(bound)
	if n == nil || bytes.Compare(n.key, it.lower) < 0 {
		it.done, it.k, it.v = true, nil, nil
		return false
	}
	it.k, it.v, it.last = n.key, n.val, n.key
	return true
}

func (it *reverseIter) Key() []byte   { return it.k }
func (it *reverseIter) Value() []byte { return it.v }
func (it *reverseIter) Err() error    { return it.err }
func (it *reverseIter) Close() error  { return nil }

// before returns the last node with key < k (k nil: the last node), or nil.
func (l *list) before(k []byte) *node {
	x := &l.head
	for i := l.level - 1; i >= 0; i-- {
		for x.next[i] != nil && (k == nil || bytes.Compare(x.next[i].key, k) < 0) {
			x = x.next[i]
		}
	}
	if x == &l.head {
		return nil
	}
	return x
}
