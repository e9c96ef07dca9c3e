package pebble

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/minca-go/minca/engine"
)

var _ engine.ReverseReader = (*Store)(nil)

// NewReverseIter iterates [lower, upper) in descending order over a
// consistent view of the store.
func (s *Store) NewReverseIter(lower, upper []byte) (engine.Iterator, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &reverseIter{iter{it: it}}, nil
}

type reverseIter struct{ iter }

func (i *reverseIter) Next() bool {
	if !i.started {
		i.started = true
		return i.it.Last()
	}
	return i.it.Prev()
}
