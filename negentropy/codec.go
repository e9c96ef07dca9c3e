package negentropy

import "fmt"

// Mode is a range's payload kind (§Range).
type Mode uint64

// The modes of §Range.
const (
	// ModeSkip: the sender does not wish to process the range further.
	ModeSkip Mode = 0
	// ModeFingerprint: the payload is the range's 16-byte fingerprint.
	ModeFingerprint Mode = 1
	// ModeIdList: the payload is a Varint count and that many ids.
	ModeIdList Mode = 2
)

// reader decodes one message. Its timestamp-delta state starts at 0 for each
// message (§Bound).
type reader struct {
	buf    []byte
	off    int
	lastTS uint64
}

func (r *reader) more() bool { return r.off < len(r.buf) }

func (r *reader) varint(what string) (uint64, error) {
	v, n, err := ReadVarint(r.buf[r.off:])
	if err != nil {
		return 0, fmt.Errorf("%s at byte %d: %w", what, r.off, err)
	}
	r.off += n
	return v, nil
}

func (r *reader) bytes(n uint64, what string) ([]byte, error) {
	if n > uint64(len(r.buf)-r.off) {
		return nil, fmt.Errorf("%w: %s at byte %d: %d bytes needed, %d left", ErrMalformed, what, r.off, n, len(r.buf)-r.off)
	}
	b := r.buf[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

// bound decodes a Bound: the timestamp as 0 for infinity or 1 + the offset
// from the previous one, saturating at infinity, then the id prefix of at
// most 32 bytes (§Bound).
func (r *reader) bound() (Bound, error) {
	enc, err := r.varint("bound timestamp")
	if err != nil {
		return Bound{}, err
	}
	ts := MaxTimestamp
	if enc != 0 {
		ts = enc - 1 + r.lastTS
		if ts < r.lastTS {
			ts = MaxTimestamp
		}
	}
	r.lastTS = ts
	at := r.off
	n, err := r.varint("bound id length")
	if err != nil {
		return Bound{}, err
	}
	if n > IDSize {
		return Bound{}, fmt.Errorf("%w: bound id prefix at byte %d is %d bytes, more than %d", ErrMalformed, at, n, IDSize)
	}
	p, err := r.bytes(n, "bound id prefix")
	if err != nil {
		return Bound{}, err
	}
	b := Bound{Item: Item{Timestamp: ts}, PrefixLen: int(n)}
	copy(b.Item.ID[:], p)
	return b, nil
}

// writer encodes bounds of one message; its timestamp-delta state starts at
// 0 for each message (§Bound).
type writer struct {
	lastTS uint64
}

// appendBound appends b: infinity as 0, any other timestamp as 1 + its
// offset from the previous one, then the id prefix (§Bound).
func (w *writer) appendBound(dst []byte, b Bound) []byte {
	ts := b.Item.Timestamp
	if ts == MaxTimestamp {
		w.lastTS = MaxTimestamp
		dst = AppendVarint(dst, 0)
	} else {
		dst = AppendVarint(dst, ts-w.lastTS+1)
		w.lastTS = ts
	}
	dst = AppendVarint(dst, uint64(b.PrefixLen))
	return append(dst, b.Item.ID[:b.PrefixLen]...)
}
