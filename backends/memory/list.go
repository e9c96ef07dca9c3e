package memory

import (
	"bytes"
	"math/rand/v2"
)

// list is a skip list of keys to values; a nil value with del set is a
// deletion (used by batches). Not safe for concurrent use by itself.
type list struct {
	head  node
	level int
	rng   *rand.Rand
	n     int
}

const maxLevel = 24

type node struct {
	key  []byte
	val  []byte
	del  bool
	next [maxLevel]*node
}

func newList(seed uint64) *list {
	return &list{level: 1, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// seek returns the first node with key ≥ k, filling prev when not nil.
func (l *list) seek(k []byte, prev *[maxLevel]*node) *node {
	x := &l.head
	for i := l.level - 1; i >= 0; i-- {
		for x.next[i] != nil && bytes.Compare(x.next[i].key, k) < 0 {
			x = x.next[i]
		}
		if prev != nil {
			prev[i] = x
		}
	}
	return x.next[0]
}

// after returns the first node with key > k.
func (l *list) after(k []byte) *node {
	n := l.seek(k, nil)
	if n != nil && bytes.Equal(n.key, k) {
		n = n.next[0]
	}
	return n
}

func (l *list) get(k []byte) (*node, bool) {
	n := l.seek(k, nil)
	if n != nil && bytes.Equal(n.key, k) {
		return n, true
	}
	return nil, false
}

func (l *list) put(k, v []byte, del bool) {
	var prev [maxLevel]*node
	n := l.seek(k, &prev)
	if n != nil && bytes.Equal(n.key, k) {
		n.val, n.del = v, del
		return
	}
	lvl := 1
	for lvl < maxLevel && l.rng.Uint32()&3 == 0 {
		lvl++
	}
	if lvl > l.level {
		for i := l.level; i < lvl; i++ {
			prev[i] = &l.head
		}
		l.level = lvl
	}
	n = &node{key: k, val: v, del: del}
	for i := 0; i < lvl; i++ {
		n.next[i] = prev[i].next[i]
		prev[i].next[i] = n
	}
	l.n++
}

func (l *list) remove(k []byte) {
	var prev [maxLevel]*node
	n := l.seek(k, &prev)
	if n == nil || !bytes.Equal(n.key, k) {
		return
	}
	for i := 0; i < l.level; i++ {
		if prev[i].next[i] == n {
			prev[i].next[i] = n.next[i]
		}
	}
	l.n--
}
