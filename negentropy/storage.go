package negentropy

// Storage is a sorted set of items read by index, as the reconciliation loop
// needs it (§Preparation). Indices run from 0 to Size()-1 in item order.
// Implementations return an error, never panic, for a range outside
// [0, Size()].
type Storage interface {
	// Size is the number of items.
	Size() int
	// Iterate calls yield for the items at indices begin..end-1 in order,
	// stopping early when yield returns false.
	Iterate(begin, end int, yield func(index int, it Item) bool) error
	// FindLowerBound returns the first index in [begin, end) whose item is
	// not below b's padded item, or end if none is.
	FindLowerBound(begin, end int, b Bound) (int, error)
	// Fingerprint returns the fingerprint of the items at begin..end-1
	// (§Fingerprint Algorithm).
	Fingerprint(begin, end int) (Fingerprint, error)
}

// ItemReader is a Storage that reads one item apart from Iterate. The
// reconciliation reads the items beside a bound it writes (the first item
// an IdList leaves out, the two around a bucket's end) with Item when its
// Storage has it, so that Iterate is called only for the items it
// compares or lists: a Storage may take Iterate's items as those the peer
// was shown.
type ItemReader interface {
	// Item returns the item at index i.
	Item(i int) (Item, error)
}

// item reads the item at index i of st.
func item(st Storage, i int) (Item, error) {
	if r, ok := st.(ItemReader); ok {
		return r.Item(i)
	}
	var out Item
	err := st.Iterate(i, i+1, func(_ int, it Item) bool {
		out = it
		return false
	})
	return out, err
}
