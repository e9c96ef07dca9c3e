package negentropy

import (
	"fmt"
	"slices"
)

// frameOverhead is the room a limited message keeps free for its closing
// range, as the reference does: a message is full once its length would
// pass limit - 200.
const frameOverhead = 200

// outChunk is the size at which an answer under construction moves on to a
// new buffer.
const outChunk = 64 << 10

// MinFrameSizeLimit is the smallest frame size limit accepted; 0 means none.
const MinFrameSizeLimit = 4096

// session is the state both roles share: the storage and the frame size
// limit. Everything else lives in one call.
type session struct {
	storage        Storage
	frameSizeLimit uint64
}

func newSession(s Storage, frameSizeLimit uint64) (session, error) {
	if frameSizeLimit != 0 && frameSizeLimit < MinFrameSizeLimit {
		return session{}, fmt.Errorf("%w: %d", ErrFrameSizeLimit, frameSizeLimit)
	}
	return session{storage: s, frameSizeLimit: frameSizeLimit}, nil
}

func (s *session) full(n int) bool {
	return s.frameSizeLimit != 0 && uint64(n) > s.frameSizeLimit-frameOverhead
}

// reconcile answers one message (§Message, §Range). The initiator collects
// have and need from IdList ranges and answers them with nothing; the other
// side answers an IdList with all its ids in the range. A pending Skip is
// written only before the next range that is not a Skip, so trailing Skips
// are dropped.
func (s *session) reconcile(query []byte, initiator bool, have, need *[]ID) ([]byte, error) {
	out := []byte{ProtocolVersion}
	if len(query) == 0 {
		return nil, fmt.Errorf("%w: empty message", ErrMalformed)
	}
	if v := query[0]; v != ProtocolVersion {
		if v < 0x60 || v > 0x6f {
			return nil, fmt.Errorf("%w: protocol version byte 0x%02x", ErrMalformed, v)
		}
		if initiator {
			return nil, &VersionError{Version: v}
		}
		return out, nil // the downgrade answer: the version we speak
	}

	r := reader{buf: query, off: 1}
	var w writer
	size := s.storage.Size()
	var prevBound Bound
	prevIndex := 0
	skip := false
	// A large answer is built in chunks joined once at the end: growing one
	// buffer of megabytes copies and faults in far more memory.
	var chunks [][]byte
	written := 0 // bytes in chunks

	for ri := 0; r.more(); ri++ {
		if len(out) >= outChunk {
			chunks = append(chunks, out)
			written += len(out)
			out = make([]byte, 0, 2*outChunk)
		}
		mark := len(out)
		flushSkip := func() {
			if skip {
				skip = false
				out = w.appendBound(out, prevBound)
				out = AppendVarint(out, uint64(ModeSkip))
			}
		}

		at := r.off
		curr, err := r.bound()
		if err != nil {
			return nil, fmt.Errorf("range %d: %w", ri, err)
		}
		if curr.Item.Compare(prevBound.Item) < 0 {
			return nil, fmt.Errorf("%w: range %d at byte %d: bound below the previous one", ErrMalformed, ri, at)
		}
		mode, err := r.varint("mode")
		if err != nil {
			return nil, fmt.Errorf("range %d: %w", ri, err)
		}
		lower := prevIndex
		upper, err := s.storage.FindLowerBound(prevIndex, size, curr)
		if err != nil {
			return nil, fmt.Errorf("negentropy: range %d: storage: %w", ri, err)
		}
		kept := false // the range's output already counts as written

		switch Mode(mode) {
		case ModeSkip:
			skip = true

		case ModeFingerprint:
			theirs, err := r.bytes(FingerprintSize, "fingerprint")
			if err != nil {
				return nil, fmt.Errorf("range %d: %w", ri, err)
			}
			ours, err := s.storage.Fingerprint(lower, upper)
			if err != nil {
				return nil, fmt.Errorf("negentropy: range %d: storage: %w", ri, err)
			}
			if Fingerprint(theirs) == ours {
				skip = true
				break
			}
			flushSkip()
			if out, err = s.splitRange(&w, out, lower, upper, curr); err != nil {
				return nil, fmt.Errorf("negentropy: range %d: %w", ri, err)
			}

		case ModeIdList:
			n, err := r.varint("id list length")
			if err != nil {
				return nil, fmt.Errorf("range %d: %w", ri, err)
			}
			if left := uint64(len(r.buf) - r.off); n > left/IDSize {
				return nil, fmt.Errorf("%w: range %d: id list of %d ids, %d bytes left", ErrMalformed, ri, n, left)
			}
			ids, _ := r.bytes(n*IDSize, "id list")
			if initiator {
				skip = true
				if err := s.compare(ids, lower, upper, have, need); err != nil {
					return nil, fmt.Errorf("negentropy: range %d: %w", ri, err)
				}
				break
			}
			flushSkip()
			if out, upper, err = s.appendIDList(&w, out, written+mark, lower, upper, curr); err != nil {
				return nil, fmt.Errorf("negentropy: range %d: %w", ri, err)
			}
			kept = true

		default:
			return nil, fmt.Errorf("%w: range %d: unknown mode %d", ErrMalformed, ri, mode)
		}

		if s.full(written + len(out)) {
			// Full: drop this range's output (unless written) and close
			// with one fingerprint of the rest, up to infinity.
			if !kept {
				out = out[:mark]
			}
			fp, err := s.storage.Fingerprint(upper, size)
			if err != nil {
				return nil, fmt.Errorf("negentropy: closing range: storage: %w", err)
			}
			out = w.appendBound(out, InfiniteBound())
			out = AppendVarint(out, uint64(ModeFingerprint))
			out = append(out, fp[:]...)
			break
		}
		prevIndex = upper
		prevBound = curr
	}
	if chunks == nil {
		return out, nil
	}
	all := make([]byte, 0, written+len(out))
	for _, c := range chunks {
		all = append(all, c...)
	}
	return append(all, out...), nil
}

// compare sets the peer's ids against ours in [lower, upper): ours alone are
// have, theirs alone are need, each once, need in the peer's order.
func (s *session) compare(ids []byte, lower, upper int, have, need *[]ID) error {
	theirs := make(map[ID]bool, len(ids)/IDSize) // true: not matched yet
	for i := 0; i < len(ids); i += IDSize {
		theirs[ID(ids[i:i+IDSize])] = true
	}
	err := s.storage.Iterate(lower, upper, func(_ int, it Item) bool {
		if _, ok := theirs[it.ID]; ok {
			theirs[it.ID] = false
		} else {
			*have = append(*have, it.ID)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	for i := 0; i < len(ids); i += IDSize {
		id := ID(ids[i : i+IDSize])
		if theirs[id] {
			*need = append(*need, id)
			theirs[id] = false
		}
	}
	return nil
}

// appendIDList writes the server's answer to an IdList: all its ids in the
// range, or, once the message would be full, those before the first omitted
// item, bounded by that item's full id. It returns the range's new upper
// index. mark is the message length before this range: the pending Skip is
// not counted against the limit, as in the reference. The ids that fit are
// counted first, so they are written once, straight into out.
func (s *session) appendIDList(w *writer, out []byte, mark, lower, upper int, bound Bound) ([]byte, int, error) {
	count := upper - lower
	if s.frameSizeLimit != 0 {
		// An id is written while the ids before it leave the message not
		// full: mark + IDSize*i <= limit - overhead.
		room := int64(min(s.frameSizeLimit, 1<<40)) - frameOverhead - int64(mark)
		fit := 0
		if room >= 0 {
			fit = int(min(room/IDSize+1, int64(count)))
		}
		count = fit
	}
	end, newUpper := bound, upper
	if lower+count < upper {
		newUpper = lower + count
		it, err := item(s.storage, newUpper)
		if err != nil {
			return nil, 0, fmt.Errorf("storage: %w", err)
		}
		end = ItemBound(it)
	}
	out = slices.Grow(out, 64+count*IDSize)
	out = w.appendBound(out, end)
	out = AppendVarint(out, uint64(ModeIdList))
	out = AppendVarint(out, uint64(count))
	err := s.storage.Iterate(lower, newUpper, func(_ int, it Item) bool {
		out = append(out, it.ID[:]...)
		return true
	})
	if err != nil {
		return nil, 0, fmt.Errorf("storage: %w", err)
	}
	return out, newUpper, nil
}

// splitRange writes [lower, upper) ending at upperBound: as one IdList when
// it holds fewer than 2 x 16 items, else as 16 Fingerprint buckets, the
// first n % 16 one item larger, each ending at the minimal bound before the
// next bucket's first item (§Range, §Bound).
func (s *session) splitRange(w *writer, out []byte, lower, upper int, upperBound Bound) ([]byte, error) {
	const buckets = 16
	n := upper - lower
	if n < 2*buckets {
		out = slices.Grow(out, 64+n*IDSize)
		out = w.appendBound(out, upperBound)
		out = AppendVarint(out, uint64(ModeIdList))
		out = AppendVarint(out, uint64(n))
		err := s.storage.Iterate(lower, upper, func(_ int, it Item) bool {
			out = append(out, it.ID[:]...)
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		return out, nil
	}
	per, extra := n/buckets, n%buckets
	curr := lower
	for i := 0; i < buckets; i++ {
		size := per
		if i < extra {
			size++
		}
		fp, err := s.storage.Fingerprint(curr, curr+size)
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		curr += size
		next := upperBound
		if curr != upper {
			prev, err := item(s.storage, curr-1)
			if err != nil {
				return nil, fmt.Errorf("storage: %w", err)
			}
			first, err := item(s.storage, curr)
			if err != nil {
				return nil, fmt.Errorf("storage: %w", err)
			}
			next = minimalBound(prev, first)
		}
		out = w.appendBound(out, next)
		out = AppendVarint(out, uint64(ModeFingerprint))
		out = append(out, fp[:]...)
	}
	return out, nil
}
