package engine

import "unsafe"

// keyArena holds the keys a batch writes, end to end in chunks, so that a
// key is made once — built in place at the arena's tail (tail, then a
// keys.Append… form) — and kept as the string the batch's write map is
// keyed by without a copy of its own: a write of the node's own costs
// about a dozen keys, each once made as bytes and once more as the map's
// string, and the batch's commit copied them all a third time.
//
// A byte of a chunk below its length is never written again, so the
// strings made over them (unsafe.String) stay what they were; a chunk
// lives as long as any of its keys does. An arena is used by the one
// goroutine that decides its batch.
type keyArena struct {
	chunk []byte
	// first is the size of the first chunk, when the batch's size tells
	// it (0: keyChunk), so that most batches take one.
	first int
}

const (
	// keyChunk is the size of a chunk after the first.
	keyChunk = 16 << 10
	// keyBytesPerVersion is what a version stored new takes in a batch's
	// key arena: the node's own writes write eleven keys, 830 bytes, each.
	keyBytesPerVersion = 1 << 10
	// keyRoom is the room tail leaves for a key to be built in: more than
	// any key but one naming a long record key, which append then makes
	// elsewhere, and own copies in.
	keyRoom = 256
)

// tail returns an empty slice at the arena's tail, with room for a key to
// be built in by append. The key built is valid until the next call to
// tail or own; own keeps it.
func (a *keyArena) tail() []byte {
	if cap(a.chunk)-len(a.chunk) < keyRoom {
		a.chunk = make([]byte, 0, a.size(0))
	}
	return a.chunk[len(a.chunk):len(a.chunk)]
}

// own returns k as a string that lives in the arena: without a copy when
// k was built at the tail, else copied in.
func (a *keyArena) own(k []byte) string {
	n := len(k)
	if n == 0 {
		return ""
	}
	free := a.chunk[len(a.chunk):cap(a.chunk)]
	if n <= len(free) && &free[0] == &k[0] {
		a.chunk = a.chunk[:len(a.chunk)+n]
		return unsafe.String(&k[0], n)
	}
	if n > len(free) {
		a.chunk = make([]byte, 0, a.size(n))
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, k...)
	return unsafe.String(&a.chunk[start], n)
}

// size is that of the next chunk, to hold at least n bytes.
func (a *keyArena) size(n int) int {
	c := keyChunk
	if a.first > 0 {
		c, a.first = a.first+keyRoom, 0
	}
	return max(c, n)
}

// frozen is k as a string without a copy, for a k never changed after
// (aheadKeys' keys, as the map of what was read ahead keys them).
func frozen(k []byte) string { return unsafe.String(unsafe.SliceData(k), len(k)) }

// keyBytes is a key of the write map as bytes, without a copy: what is
// given a KV's batch, which does not change it.
func keyBytes(k string) []byte { return unsafe.Slice(unsafe.StringData(k), len(k)) }
