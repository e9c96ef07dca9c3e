package negentropy

import (
	"fmt"
	"slices"
)

// Vector is a [Storage] over a sorted slice, filled by [Vector.Insert] and
// made readable by [Vector.Seal], like the reference's Vector storage. A
// range's fingerprint costs a pass over the range.
type Vector struct {
	items  []Item
	sealed bool
}

// NewVector returns an empty, unsealed Vector with room for capacity items.
func NewVector(capacity int) *Vector {
	return &Vector{items: make([]Item, 0, max(capacity, 0))}
}

// Insert adds an item. It fails once the Vector is sealed, and for the
// reserved timestamp [MaxTimestamp] (§Preparation).
func (v *Vector) Insert(timestamp uint64, id ID) error {
	if v.sealed {
		return ErrSealed
	}
	if timestamp == MaxTimestamp {
		return fmt.Errorf("%w: id %s", ErrInfiniteTimestamp, id)
	}
	v.items = append(v.items, Item{Timestamp: timestamp, ID: id})
	return nil
}

// Seal sorts the items (§Preparation) and makes the Vector readable. An item
// inserted twice is an error wrapping [ErrDuplicate].
func (v *Vector) Seal() error {
	if v.sealed {
		return ErrSealed
	}
	slices.SortFunc(v.items, Item.Compare)
	for i := 1; i < len(v.items); i++ {
		if v.items[i-1] == v.items[i] {
			return fmt.Errorf("%w: %d,%s", ErrDuplicate, v.items[i].Timestamp, v.items[i].ID)
		}
	}
	v.sealed = true
	return nil
}

// Items returns the sealed, sorted items; the caller must not modify them.
func (v *Vector) Items() ([]Item, error) {
	if !v.sealed {
		return nil, ErrNotSealed
	}
	return v.items, nil
}

// Size is the number of items inserted.
func (v *Vector) Size() int { return len(v.items) }

func (v *Vector) check(begin, end int) error {
	if !v.sealed {
		return ErrNotSealed
	}
	if begin < 0 || begin > end || end > len(v.items) {
		return fmt.Errorf("%w: [%d, %d) of %d", ErrRange, begin, end, len(v.items))
	}
	return nil
}

// Iterate calls yield for items begin..end-1 ([Storage.Iterate]).
func (v *Vector) Iterate(begin, end int, yield func(int, Item) bool) error {
	if err := v.check(begin, end); err != nil {
		return err
	}
	for i := begin; i < end; i++ {
		if !yield(i, v.items[i]) {
			break
		}
	}
	return nil
}

// FindLowerBound binary-searches [begin, end) ([Storage.FindLowerBound]).
func (v *Vector) FindLowerBound(begin, end int, b Bound) (int, error) {
	if err := v.check(begin, end); err != nil {
		return 0, err
	}
	return begin + SearchItems(v.items[begin:end], b.Item), nil
}

// Fingerprint sums the ids of begin..end-1 (§Fingerprint Algorithm).
func (v *Vector) Fingerprint(begin, end int) (Fingerprint, error) {
	if err := v.check(begin, end); err != nil {
		return Fingerprint{}, err
	}
	var acc Accumulator
	for i := begin; i < end; i++ {
		acc.AddID(&v.items[i].ID)
	}
	return acc.Fingerprint(uint64(end - begin)), nil
}
