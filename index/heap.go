package index

import "slices"

// arena hands out the docs a page keeps and their bytes from a few large
// allocations, not several a doc.
type arena struct {
	buf  []byte
	docs []doc
}

// bytes returns a copy of the parts, together, from the arena; an
// allocation has room for about want of them.
func (a *arena) bytes(want int, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, min(want*n*5/4, 1<<20)))
	}
	start := len(a.buf)
	for _, p := range parts {
		a.buf = append(a.buf, p...)
	}
	return a.buf[start:len(a.buf):len(a.buf)]
}

func (a *arena) doc(want int) *doc {
	if len(a.docs) == cap(a.docs) {
		a.docs = make([]doc, 0, min(max(want, 8), 128))
	}
	a.docs = a.docs[:len(a.docs)+1]
	return &a.docs[len(a.docs)-1]
}

// pageHeap keeps the n first candidates in an order: a max-heap by it
// (the worst kept on top), with the positions held, to drop a record read
// twice.
type pageHeap struct {
	o    Order
	n    int
	pos  [][]byte
	docs []*doc
	in   map[string]bool
}

func (h *pageHeap) worse(i, j int) bool { return before(h.o, h.pos[j], h.pos[i]) }

func (h *pageHeap) swap(i, j int) {
	h.pos[i], h.pos[j] = h.pos[j], h.pos[i]
	h.docs[i], h.docs[j] = h.docs[j], h.docs[i]
}

// wants reports whether a candidate at p would be kept.
func (h *pageHeap) wants(p []byte) bool {
	return !h.in[string(p)] && (len(h.pos) < h.n || before(h.o, p, h.pos[0]))
}

// offer keeps d at p if the heap wants it.
func (h *pageHeap) offer(p []byte, d *doc) {
	if !h.wants(p) {
		return
	}
	if len(h.pos) == h.n {
		delete(h.in, string(h.pos[0]))
		h.pos[0], h.docs[0] = p, d
		h.down(0)
	} else {
		h.pos, h.docs = append(h.pos, p), append(h.docs, d)
		for i := len(h.pos) - 1; i > 0; {
			up := (i - 1) / 2
			if !h.worse(i, up) {
				break
			}
			h.swap(i, up)
			i = up
		}
	}
	h.in[string(p)] = true
}

func (h *pageHeap) down(i int) {
	for {
		w := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h.pos) && h.worse(c, w) {
				w = c
			}
		}
		if w == i {
			return
		}
		h.swap(i, w)
		i = w
	}
}

// sorted returns the kept positions and docs in order.
func (h *pageHeap) sorted() ([][]byte, []*doc) {
	idx := make([]int, len(h.pos))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if before(h.o, h.pos[a], h.pos[b]) {
			return -1
		}
		if before(h.o, h.pos[b], h.pos[a]) {
			return 1
		}
		return 0
	})
	pos, out := make([][]byte, len(idx)), make([]*doc, len(idx))
	for i, j := range idx {
		pos[i], out[i] = h.pos[j], h.docs[j]
	}
	return pos, out
}
