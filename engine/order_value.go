package engine

import (
	"encoding/binary"
	"unicode/utf8"
)

// A sync-order entry ('o' space millis digest) names the version's
// collection, so that a sync of some collections can filter, and since
// layout 17 also where the version's value is, its vseq: a peer that asks
// for versions it was just listed (a WANT after a reconciliation, 02 §9)
// then needs no look-up of each id in 'e' (VersionsStoredAt). An entry of
// an earlier layout, the collection alone, is read as it is (its vseq
// unknown: the id is looked up in 'e'); entries are written once, when
// their version is stored, so a store grown in this layout holds both.
//
// The two are told apart by the first byte: a collection is a JSON
// string, valid UTF-8 (canonical parsing refuses anything else), in
// which the byte 0xFF never occurs.
const orderMark = 0xFF

// orderValue is a sync-order entry's value in this layout: orderMark, the
// vseq (8 bytes, big-endian), the collection.
func orderValue(vseq uint64, coll string) []byte {
	b := make([]byte, 0, 9+len(coll))
	b = append(b, orderMark)
	b = binary.BigEndian.AppendUint64(b, vseq)
	return append(b, coll...)
}

// readOrder reads a sync-order entry's value: its collection and the vseq
// it names, 0 for an entry of a layout before 17. ok is false for a value
// of neither form.
func readOrder(val []byte) (coll []byte, vseq uint64, ok bool) {
	if len(val) == 0 || val[0] != orderMark {
		return val, 0, utf8.Valid(val)
	}
	if len(val) < 9 {
		return nil, 0, false
	}
	vseq = binary.BigEndian.Uint64(val[1:9])
	return val[9:], vseq, vseq != 0
}
