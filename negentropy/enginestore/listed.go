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
	// run is what was noted since the last merge, in the order listed, in
	// chunks (firstChunk, runChunk); run[0][next:] and the chunks after are not yet
	// asked for. A peer asks for what it was listed in the order it was
	// listed (a WANT after a reconciliation), so each id asked is most
	// often the run's next: found with no search, and no sort of the
	// run. An id that is not is looked for in sorted, and past that the
	// run is merged into sorted.
	run    [][]listedAt
	next   int
	chunks int        // chunks made
	passed []listedAt // items the run's next passed over and not asked for, from the chunks given back
	taken  int64      // bytes taken from room
	keep   bool       // notes kept (Keep)
	closed bool
}

// runChunk is the most items a chunk of the run holds. A chunk's room is
// taken whole when it is made (fewer items when the room has less left),
// and given back once all its items are passed.
const runChunk = 1024

// firstChunk is the items the run's first chunk holds; each chunk after
// holds twice the one before, up to runChunk: a session that lists few
// ids takes little room.
const firstChunk = 64

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

// takeUpTo takes as many units of unit bytes as are left, at most max,
// and returns how many.
func (r *Room) takeUpTo(max int, unit int64) int {
	for {
		left := r.left.Load()
		n := int(min(int64(max), left/unit))
		if n <= 0 {
			return 0
		}
		if r.left.CompareAndSwap(left, left-int64(n)*unit) {
			return n
		}
	}
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
	if !l.keep || l.closed {
		return
	}
	if n := len(l.run); n == 0 || len(l.run[n-1]) == cap(l.run[n-1]) {
		c := l.room.takeUpTo(min(runChunk, firstChunk<<min(l.chunks, 4)), listedSize)
		if c == 0 {
			return // the room is spent
		}
		l.taken += int64(c) * listedSize
		l.chunks++
		l.run = append(l.run, make([]listedAt, 0, c))
	}
	last := &l.run[len(l.run)-1]
	*last = append(*last, listedAt{*id, at})
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
	var missed []int
	for i := range n {
		d := id(i)
		if a, ok := l.takeNext(&d); ok {
			at[i] = a
		} else if a, ok := l.takeSorted(&d); ok {
			at[i] = a
		} else {
			missed = append(missed, i)
		}
	}
	if len(missed) == 0 || len(l.run) == 0 && len(l.passed) == 0 {
		return
	}
	// Asked out of the order listed (or never listed): the run is
	// merged into sorted, where the rest are looked for.
	l.merge()
	for _, i := range missed {
		d := id(i)
		if a, ok := l.takeSorted(&d); ok {
			at[i] = a
		}
	}
}

// takeNext takes the place of id when it is among the run's next items
// (runAhead), and gives back each chunk of the run once all of it is
// passed. The items passed over (ids the peer holds or refused, so does
// not ask for) are kept for the next merge.
func (l *Listed) takeNext(id *negentropy.ID) (uint64, bool) {
	c, j := 0, l.next
	for range runAhead + 1 {
		for c < len(l.run) && j == len(l.run[c]) {
			c, j = c+1, 0
		}
		if c == len(l.run) {
			return 0, false
		}
		if l.run[c][j].id == *id {
			at := l.run[c][j].at
			l.run[c][j].at = 0
			l.next = j + 1
			if l.next == cap(l.run[c]) {
				c, l.next = c+1, 0
			}
			for range c {
				l.dropChunk()
			}
			return at, true
		}
		j++
	}
	return 0, false
}

// runAhead is how many of the run's next items an id asked for may pass
// over and still be taken from the run.
const runAhead = 16

// dropChunk gives back the run's first chunk, all of it passed; what was
// not asked for goes into passed, within the room.
func (l *Listed) dropChunk() {
	l.passed = l.unchunk(l.passed, l.run[0])
	l.run[0] = nil
	l.run = l.run[1:]
}

// unchunk gives back chunk's room and appends to out its items not asked
// for, each taking its own room (those the room has none for are
// forgotten).
func (l *Listed) unchunk(out, chunk []listedAt) []listedAt {
	l.give(int64(cap(chunk)) * listedSize)
	for _, e := range chunk {
		if e.at != 0 && l.room.take(listedSize) {
			l.taken += listedSize
			out = append(out, e)
		}
	}
	return out
}

// takeSorted takes the place of id from the items merged before.
func (l *Listed) takeSorted(id *negentropy.ID) (uint64, bool) {
	// The heads first (a small array, searched fast), then the few ids
	// sharing one.
	h := binary.BigEndian.Uint64(id[:8])
	for j, _ := slices.BinarySearch(l.heads, h); j < len(l.heads) && l.heads[j] == h; j++ {
		if e := &l.sorted[j]; e.id == *id && e.at != 0 {
			at := e.at
			e.at = 0
			return at, true
		}
	}
	return 0, false
}

// merge sorts the run's items not asked for into those before, dropping
// those asked for since (and giving their room back).
func (l *Listed) merge() {
	tail := l.passed
	for _, c := range l.run {
		tail = l.unchunk(tail, c)
	}
	l.run, l.next, l.passed = nil, 0, nil
	if len(tail) == 0 {
		return
	}
	cmpID := func(a, b listedAt) int { return bytes.Compare(a.id[:], b.id[:]) }
	slices.SortFunc(tail, cmpID)
	// Those asked for dropped first, then both merged from the back into
	// sorted, grown in place.
	kept := l.sorted[:0]
	for _, e := range l.sorted {
		if e.at != 0 {
			kept = append(kept, e)
		}
	}
	l.give(int64(len(l.sorted)-len(kept)) * listedSize)
	i, j := len(kept)-1, len(tail)-1
	l.sorted = slices.Grow(kept, len(tail))[:len(kept)+len(tail)]
	for k := len(l.sorted) - 1; j >= 0; k-- {
		if i >= 0 && cmpID(l.sorted[i], tail[j]) > 0 {
			l.sorted[k] = l.sorted[i]
			i--
		} else {
			l.sorted[k] = tail[j]
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
	l.sorted, l.run, l.passed, l.heads = nil, nil, nil, nil
}
