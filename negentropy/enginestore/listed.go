package enginestore

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/minca-go/minca/negentropy"
)

// Listed remembers where the store holds the items a reconciliation
// listed to the peer (each [Placed.At]), so that the versions the peer
// then asks for are read there, with no look-up of each id (a WANT after
// a reconciliation asks for ids it was just listed, 02 §9). It holds what
// its [Room] lets it, in bytes, and gives back what it no longer needs:
// an item once asked for, everything at Close. It is safe for concurrent
// use.
type Listed struct {
	room *Room

	mu     sync.Mutex
	sorted []listedAt // by id; at 0 once asked for
	heads  []uint64   // the first 8 bytes of each of sorted's ids, searched first
	tail   []listedAt // noted since the last look-up, in the order listed
	taken  int64      // bytes taken from room
	keep   bool       // notes kept (Keep)
	closed bool
}

// listedAt is an item listed and where its store holds it.
type listedAt struct {
	id negentropy.ID
	at uint64
}

// listedSize is what an item remembered costs, counted against the Room:
// its id, place and head.
const listedSize = int64(negentropy.IDSize + 8 + 8)

// Room is the bytes the [Listed] given it may hold together (the
// sessions of one connection, say). It is safe for concurrent use.
type Room struct{ left atomic.Int64 }

// NewRoom is a Room of n bytes.
func NewRoom(n int64) *Room {
	r := &Room{}
	r.left.Store(n)
	return r
}

func (r *Room) take(n int64) bool {
	if r.left.Add(-n) >= 0 {
		return true
	}
	r.left.Add(n)
	return false
}

// NewListed is an empty Listed holding what room lets it, once told to
// Keep.
func NewListed(room *Room) *Listed { return &Listed{room: room} }

// note remembers that id, held at at, was listed; not once room is spent.
func (l *Listed) note(id *negentropy.ID, at uint64) {
	if at == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.keep || l.closed || !l.room.take(listedSize) {
		return
	}
	l.taken += listedSize
	l.tail = append(l.tail, listedAt{*id, at})
}

// Keep has l keep the items noted from now on; until then it keeps
// none. A responder keeps them once the peer goes on past its first
// answer: a peer that opens sessions and holds them open costs nothing
// here for each.
func (l *Listed) Keep() {
	l.mu.Lock()
	l.keep = true
	l.mu.Unlock()
}

// Places sets at[i] to where the store holds the i-th of n ids asked for
// (id(i)), for each one listed and not asked for before, and leaves the
// others' alone; each is then forgotten.
func (l *Listed) Places(n int, id func(i int) negentropy.ID, at []uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.merge()
	if len(l.sorted) == 0 {
		return
	}
	for i := range n {
		d := id(i)
		// The heads first (a small array, searched fast), then the
		// few ids sharing one.
		h := binary.BigEndian.Uint64(d[:8])
		for j, _ := slices.BinarySearch(l.heads, h); j < len(l.heads) && l.heads[j] == h; j++ {
			if e := &l.sorted[j]; e.id == d && e.at != 0 {
				at[i] = e.at
				e.at = 0
				break
			}
		}
	}
}

// merge sorts the items noted since the last look-up into those before,
// dropping those asked for since (and giving their room back).
func (l *Listed) merge() {
	if len(l.tail) == 0 {
		return
	}
	cmpID := func(a, b listedAt) int { return bytes.Compare(a.id[:], b.id[:]) }
	slices.SortFunc(l.tail, cmpID)
	// Those asked for dropped first, then both merged from the back into
	// sorted, grown in place.
	kept := l.sorted[:0]
	for _, e := range l.sorted {
		if e.at != 0 {
			kept = append(kept, e)
		}
	}
	l.give(int64(len(l.sorted)-len(kept)) * listedSize)
	i, j := len(kept)-1, len(l.tail)-1
	l.sorted = slices.Grow(kept, len(l.tail))[:len(kept)+len(l.tail)]
	for k := len(l.sorted) - 1; j >= 0; k-- {
		if i >= 0 && cmpID(l.sorted[i], l.tail[j]) > 0 {
			l.sorted[k] = l.sorted[i]
			i--
		} else {
			l.sorted[k] = l.tail[j]
			j--
		}
	}
	// An id listed twice (a range listed again, a bound read) is kept
	// once.
	n := 0
	for i := range l.sorted {
		if n > 0 && l.sorted[n-1].id == l.sorted[i].id {
			if l.sorted[n-1].at == 0 {
				l.sorted[n-1].at = l.sorted[i].at
			}
			continue
		}
		l.sorted[n] = l.sorted[i]
		n++
	}
	l.give(int64(len(l.sorted)-n) * listedSize)
	l.sorted = l.sorted[:n]
	l.heads = l.heads[:0]
	for i := range l.sorted {
		l.heads = append(l.heads, binary.BigEndian.Uint64(l.sorted[i].id[:8]))
	}
	if cap(l.tail) > 4096 {
		l.tail = nil // a large round's: not kept for the next
	} else {
		l.tail = l.tail[:0]
	}
}

func (l *Listed) give(n int64) {
	l.taken -= n
	l.room.left.Add(n)
}

// Close forgets everything and gives its room back.
func (l *Listed) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.give(l.taken)
	l.sorted, l.tail, l.heads = nil, nil, nil
}
