package sqlite

import "github.com/minca-go/minca/engine"

var _ engine.ReverseReader = (*Store)(nil)

// NewReverseIter iterates [lower, upper) in descending order within one
// read transaction, a consistent view of the store.
func (s *Store) NewReverseIter(lower, upper []byte) (engine.Iterator, error) {
	if s.blocks != nil {
		return s.newBlockIter(lower, upper, true)
	}
	lower, upper, empty := s.storedRange(lower, upper)
	if empty {
		return &iter{s: s}, nil
	}
	q, args := s.kvRead+` WHERE k >= ? AND k < ? ORDER BY k DESC`, []any{lower, upper}
	if upper == nil {
		q, args = s.kvRead+` WHERE k >= ? ORDER BY k DESC`, []any{lower}
	}
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	return &iter{s: s, rows: rows}, nil
}
