package pebble

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/minca-go/minca/engine"
)

var _ engine.ReverseReader = (*Store)(nil)

// NewReverseIter iterates [lower, upper) in descending order over a
// consistent view of the store, with the guards of NewIter.
func (s *Store) NewReverseIter(lower, upper []byte) (_ engine.Iterator, err error) {
	if err := s.fatal.get(); err != nil {
		return nil, err
	}
	defer s.guard(&err)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, s.wrap(err)
	}
	return &reverseIter{iter{s: s, it: it}}, nil
}

type reverseIter struct{ iter }

func (i *reverseIter) Next() (ok bool) {
	if i.err != nil {
		return false
	}
	if i.err = i.s.fatal.get(); i.err != nil {
		return false
	}
	defer i.s.guard(&i.err)
	if !i.started {
		i.started = true
		return i.it.Last()
	}
	return i.it.Prev()
}
