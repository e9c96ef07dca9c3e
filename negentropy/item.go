package negentropy

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
)

// Sizes and constants of protocol V1 (§Id, §Message, §Fingerprint Algorithm).
const (
	// IDSize is the length of an id in bytes (§Id).
	IDSize = 32
	// FingerprintSize is the length of a fingerprint in bytes (§Fingerprint Algorithm).
	FingerprintSize = 16
	// ProtocolVersion is the version byte that opens every V1 message (§Message).
	ProtocolVersion byte = 0x61
	// MaxTimestamp is the reserved "infinity" timestamp; no item may carry it
	// (§Preparation).
	MaxTimestamp uint64 = math.MaxUint64
)

// ID is an item's 32-byte id (§Id). Ids order lexically by byte.
type ID [IDSize]byte

// String returns the id in lower-case hex.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// ParseID decodes a 64-character hex id (§Id).
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*IDSize {
		return id, fmt.Errorf("negentropy: id %q: want %d hex characters, got %d", s, 2*IDSize, len(s))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("negentropy: id %q: %w", s, err)
	}
	return id, nil
}

// Item is one record of a set: a timestamp and an id (§Preparation).
type Item struct {
	Timestamp uint64
	ID        ID
}

// Compare orders items by timestamp, then by id byte by byte
// (§Preparation). It returns -1, 0 or +1.
func (a Item) Compare(b Item) int {
	if a.Timestamp != b.Timestamp {
		if a.Timestamp < b.Timestamp {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.ID[:], b.ID[:])
}

// Bound is a range's exclusive upper bound: a timestamp and the first
// PrefixLen bytes of an id, the other bytes being zero (§Bound). It compares
// as the item it pads to.
type Bound struct {
	Item      Item
	PrefixLen int
}

// InfiniteBound is the bound past every item: timestamp infinity, empty id
// prefix (§Bound).
func InfiniteBound() Bound { return Bound{Item: Item{Timestamp: MaxTimestamp}} }

// ItemBound is the bound just below it, with its whole id (§Bound).
func ItemBound(it Item) Bound { return Bound{Item: it, PrefixLen: IDSize} }

// minimalBound is the shortest bound above prev and at or below curr, with
// prev < curr: the timestamp alone when they differ, else curr's id up to one
// byte past the shared prefix (§Bound).
func minimalBound(prev, curr Item) Bound {
	if prev.Timestamp != curr.Timestamp {
		return Bound{Item: Item{Timestamp: curr.Timestamp}}
	}
	shared := 0
	for shared < IDSize && prev.ID[shared] == curr.ID[shared] {
		shared++
	}
	n := min(shared+1, IDSize)
	b := Bound{Item: Item{Timestamp: curr.Timestamp}, PrefixLen: n}
	copy(b.Item.ID[:n], curr.ID[:n])
	return b
}

// compareItems is [Item.Compare] without copying the items.
func compareItems(a, b *Item) int {
	if a.Timestamp != b.Timestamp {
		if a.Timestamp < b.Timestamp {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.ID[:], b.ID[:])
}

// SearchItems returns the index of the first of the sorted items that is
// not below key, or len(items) (§Preparation order).
func SearchItems(items []Item, key Item) int {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareItems(&items[m], &key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
