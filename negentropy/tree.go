package negentropy

import (
	"fmt"
	"iter"
	"slices"
)

// Node sizes of a [Tree]: a leaf holds up to treeLeafMax items, an inner
// node up to treeFanout children.
const (
	treeLeafMax = 64
	treeFanout  = 32
)

// Tree is a [Storage] kept as a B+tree whose every node caches its item
// count and the sum of its ids (§Fingerprint Algorithm). Finding an index,
// a bound or the fingerprint of any range costs O(log n) node visits,
// whatever the range's length, so a store of millions of items answers
// without rereading them. Items may be inserted at any time, but not during
// a reconciliation that reads the Tree. The zero Tree is empty.
type Tree struct {
	root *treeNode
}

// treeNode is a leaf (items) or an inner node (children, with keys[i] the
// first item of children[i]); count and sum cover the whole subtree.
type treeNode struct {
	count    int
	sum      Accumulator
	items    []Item
	keys     []Item
	children []*treeNode
}

func (n *treeNode) leaf() bool { return n.children == nil }

func (n *treeNode) first() Item {
	if n.leaf() {
		return n.items[0]
	}
	return n.keys[0]
}

// NewTree returns an empty Tree.
func NewTree() *Tree { return &Tree{} }

// BuildTree builds a Tree in one pass over items, which must come in
// strictly increasing order (§Preparation); it packs nodes full. An error
// from the sequence ends the build with that error.
func BuildTree(items iter.Seq2[Item, error]) (*Tree, error) {
	var level []*treeNode
	var leaf *treeNode
	var prev Item
	n := 0
	for it, err := range items {
		if err != nil {
			return nil, fmt.Errorf("negentropy: building tree: %w", err)
		}
		if it.Timestamp == MaxTimestamp {
			return nil, fmt.Errorf("%w: id %s", ErrInfiniteTimestamp, it.ID)
		}
		if n > 0 && prev.Compare(it) >= 0 {
			if prev == it {
				return nil, fmt.Errorf("%w: %d,%s", ErrDuplicate, it.Timestamp, it.ID)
			}
			return nil, fmt.Errorf("negentropy: building tree: item %d,%s out of order", it.Timestamp, it.ID)
		}
		prev = it
		n++
		if leaf == nil || len(leaf.items) == treeLeafMax {
			leaf = &treeNode{items: make([]Item, 0, treeLeafMax)}
			level = append(level, leaf)
		}
		leaf.items = append(leaf.items, it)
		leaf.count++
		leaf.sum.AddID(&it.ID)
	}
	if len(level) == 0 {
		return &Tree{}, nil
	}
	for len(level) > 1 {
		var up []*treeNode
		for i := 0; i < len(level); i += treeFanout {
			p := &treeNode{}
			for _, c := range level[i:min(i+treeFanout, len(level))] {
				p.adopt(len(p.children), c)
			}
			up = append(up, p)
		}
		level = up
	}
	return &Tree{root: level[0]}, nil
}

// adopt inserts child c at position i and adds its count and sum.
func (n *treeNode) adopt(i int, c *treeNode) {
	n.children = slices.Insert(n.children, i, c)
	n.keys = slices.Insert(n.keys, i, c.first())
	n.count += c.count
	n.sum.Add(&c.sum)
}

// Insert adds an item, keeping the order of §Preparation. An item already
// held is an error wrapping [ErrDuplicate]; the reserved timestamp
// [MaxTimestamp] one wrapping [ErrInfiniteTimestamp].
func (t *Tree) Insert(it Item) error {
	if it.Timestamp == MaxTimestamp {
		return fmt.Errorf("%w: id %s", ErrInfiniteTimestamp, it.ID)
	}
	if t.root == nil {
		t.root = &treeNode{items: make([]Item, 0, 1)}
	}
	right, err := t.root.insert(it)
	if err != nil {
		return err
	}
	if right != nil {
		root := &treeNode{}
		root.adopt(0, t.root)
		root.adopt(1, right)
		t.root = root
	}
	return nil
}

// insert adds it below n and returns n's new right sibling if n split.
func (n *treeNode) insert(it Item) (*treeNode, error) {
	if n.leaf() {
		i := SearchItems(n.items, it)
		if i < len(n.items) && n.items[i] == it {
			return nil, fmt.Errorf("%w: %d,%s", ErrDuplicate, it.Timestamp, it.ID)
		}
		n.items = slices.Insert(n.items, i, it)
		n.count++
		n.sum.AddID(&it.ID)
		if len(n.items) <= treeLeafMax {
			return nil, nil
		}
		mid := len(n.items) / 2
		if i == len(n.items)-1 {
			mid = treeLeafMax // appending in order: keep this leaf full
		}
		right := &treeNode{items: append(make([]Item, 0, treeLeafMax), n.items[mid:]...)}
		n.items = append(make([]Item, 0, treeLeafMax), n.items[:mid]...)
		n.resum()
		right.resum()
		return right, nil
	}
	i := n.route(it)
	right, err := n.children[i].insert(it)
	if err != nil {
		return nil, err
	}
	if i == 0 && it.Compare(n.keys[0]) < 0 {
		n.keys[0] = it
	}
	n.count++
	n.sum.AddID(&it.ID)
	if right == nil {
		return nil, nil
	}
	n.children = slices.Insert(n.children, i+1, right)
	n.keys = slices.Insert(n.keys, i+1, right.first())
	if len(n.children) <= treeFanout {
		return nil, nil
	}
	mid := len(n.children) / 2
	if i+1 == len(n.children)-1 {
		mid = treeFanout // appending in order: keep this node full
	}
	sib := &treeNode{
		children: slices.Clone(n.children[mid:]),
		keys:     slices.Clone(n.keys[mid:]),
	}
	n.children = slices.Clone(n.children[:mid])
	n.keys = slices.Clone(n.keys[:mid])
	n.resum()
	sib.resum()
	return sib, nil
}

// route is the child of an inner node whose range holds it: the last one
// whose first item is at or below it, or the first one.
func (n *treeNode) route(it Item) int {
	i := SearchItems(n.keys, it)
	if i == 0 || i < len(n.keys) && n.keys[i] == it {
		return i
	}
	return i - 1
}

// resum recomputes count and sum from the node's own items or children.
func (n *treeNode) resum() {
	n.count, n.sum = 0, Accumulator{}
	for i := range n.items {
		n.sum.AddID(&n.items[i].ID)
	}
	n.count += len(n.items)
	for _, c := range n.children {
		n.count += c.count
		n.sum.Add(&c.sum)
	}
}

// Size is the number of items.
func (t *Tree) Size() int {
	if t.root == nil {
		return 0
	}
	return t.root.count
}

func (t *Tree) check(begin, end int) error {
	if begin < 0 || begin > end || end > t.Size() {
		return fmt.Errorf("%w: [%d, %d) of %d", ErrRange, begin, end, t.Size())
	}
	return nil
}

// prefix returns the sum of the ids of the first k items.
func (t *Tree) prefix(k int) Accumulator {
	var acc Accumulator
	n := t.root
	for n != nil && k > 0 {
		if k >= n.count {
			acc.Add(&n.sum)
			break
		}
		if n.leaf() {
			for i := range k {
				acc.AddID(&n.items[i].ID)
			}
			break
		}
		var next *treeNode
		for _, c := range n.children {
			if k < c.count {
				next = c
				break
			}
			acc.Add(&c.sum)
			k -= c.count
		}
		n = next
	}
	return acc
}

// Fingerprint returns the fingerprint of items begin..end-1 from cached
// sums (§Fingerprint Algorithm).
func (t *Tree) Fingerprint(begin, end int) (Fingerprint, error) {
	if err := t.check(begin, end); err != nil {
		return Fingerprint{}, err
	}
	acc := t.prefix(end)
	lo := t.prefix(begin)
	acc.Sub(&lo)
	return acc.Fingerprint(uint64(end - begin)), nil
}

// Iterate calls yield for items begin..end-1 ([Storage.Iterate]).
func (t *Tree) Iterate(begin, end int, yield func(int, Item) bool) error {
	if err := t.check(begin, end); err != nil {
		return err
	}
	if begin < end {
		t.root.walk(0, begin, end, yield)
	}
	return nil
}

// walk yields the items of n, which starts at index off, whose indices are
// in [lo, hi); it returns false once yield has.
func (n *treeNode) walk(off, lo, hi int, yield func(int, Item) bool) bool {
	if n.leaf() {
		for j := max(lo-off, 0); j < min(hi-off, len(n.items)); j++ {
			if !yield(off+j, n.items[j]) {
				return false
			}
		}
		return true
	}
	for _, c := range n.children {
		if off >= hi {
			break
		}
		if off+c.count > lo && !c.walk(off, lo, hi, yield) {
			return false
		}
		off += c.count
	}
	return true
}

// FindLowerBound returns the first index in [begin, end) whose item is not
// below b, or end ([Storage.FindLowerBound]).
func (t *Tree) FindLowerBound(begin, end int, b Bound) (int, error) {
	if err := t.check(begin, end); err != nil {
		return 0, err
	}
	rank := 0
	for n := t.root; n != nil; {
		if n.leaf() {
			rank += SearchItems(n.items, b.Item)
			break
		}
		// Children before the last one starting below b lie wholly below it.
		i := SearchItems(n.keys, b.Item)
		if i == 0 {
			break
		}
		for _, c := range n.children[:i-1] {
			rank += c.count
		}
		n = n.children[i-1]
	}
	return min(max(rank, begin), end), nil
}
