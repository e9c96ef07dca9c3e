package engine

// ReverseReader is an optional ability of a [KV] (found by type
// assertion): iterating keys in descending order, so that a query ordered
// newest first reads only the page it returns. backends/pebble,
// backends/sqlite and backends/memory have it; the reader
// [Store.IndexReader] returns has it when the store's KV does.
type ReverseReader interface {
	// NewReverseIter iterates the keys in [lower, upper) in descending
	// order (the Iterator's Next moves to the next lower key); upper nil
	// means no bound. It sees what NewIter would.
	NewReverseIter(lower, upper []byte) (Iterator, error)
}

// reverseIndexReader is an indexReader over a KV that iterates both ways.
type reverseIndexReader struct{ indexReader }

func (r reverseIndexReader) NewReverseIter(lower, upper []byte) (Iterator, error) {
	if err := r.s.enter(); err != nil {
		return nil, err
	}
	defer r.s.leave()
	lo, hi := r.bounds(lower, upper)
	it, err := r.s.reads.iter(func() (Iterator, error) { return r.s.raw.(ReverseReader).NewReverseIter(lo, hi) })
	if err != nil {
		return nil, err
	}
	return indexIter{it}, nil
}
