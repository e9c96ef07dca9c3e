package sqlite

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"sort"
)

// Keys are kept with a short label in place of a space's tag. Most of the
// engine's keys that are not ids start with a space's 33-byte tag right
// after their table's byte (engine/internal/keys: record heads and
// histories, the sync order, writer lines, versions by root, proofs,
// files lacking), and a store holds few spaces: SQLite keeps every key
// whole (it does not share prefixes as Pebble's blocks do), so those 33
// bytes were a fifth of a store's rows. A store of this schema keeps
// such a key as
//
//	table byte ‖ label ‖ 0x00 ‖ the rest of the key
//
// where the label names the key's first 33 bytes after its table byte
// (its head; the whole rest when the key is shorter) in the klabel table.
// Labels keep the heads' order: a label is a string of bytes 0x01–0xff
// not ending in 0x01, read as a fraction in base 255 (0x01 the digit 0),
// and a new head takes a label between its neighbours', so the store's
// keys sort as the engine's and a range of the engine's keys is one range
// of the stored ones. The 0x00 after a label ends it (no label byte is
// 0x00), so no label's keys mix with another's.
//
// Which tables are so kept is a matter of size only: any key of a
// labelled table is kept right whatever its bytes (its head is labelled
// as found), and any other table's keys are kept as they are.
var labelled = [256]bool{'h': true, 'S': true, 'o': true, 'l': true, 'x': true, 'a': true, 'N': true}

// headLen is the length of a key's head: a space's tag.
const headLen = 33

// labels is a store's heads and their labels, as of a commit; a new
// batch's heads make a new one (readers keep the one they loaded).
type labels struct {
	heads   []string          // sorted
	labelOf map[string]string // head → label
	headOf  map[string]string // label → head
}

func newLabels() *labels {
	return &labels{labelOf: map[string]string{}, headOf: map[string]string{}}
}

// add is l with the head and label of a row of the klabel table (read at
// open, in head order or not).
func (l *labels) add(head, label []byte) error {
	h, lb := string(head), string(label)
	if !validLabel(label) {
		return fmt.Errorf("%w: key label %x of head %x is not a label", errDamagedValue, label, head)
	}
	if _, ok := l.labelOf[h]; ok {
		return fmt.Errorf("%w: key head %x labelled twice", errDamagedValue, head)
	}
	if _, ok := l.headOf[lb]; ok {
		return fmt.Errorf("%w: key label %x names two heads", errDamagedValue, label)
	}
	l.labelOf[h], l.headOf[lb] = lb, h
	i, _ := slices.BinarySearch(l.heads, h)
	l.heads = slices.Insert(l.heads, i, h)
	return nil
}

// ordered checks, once every row is read, that the labels keep the heads'
// order: the store's keys sort as the engine's only then.
func (l *labels) ordered() error {
	for i := 1; i < len(l.heads); i++ {
		a, b := l.labelOf[l.heads[i-1]], l.labelOf[l.heads[i]]
		if a >= b {
			return fmt.Errorf("%w: key labels %x and %x out of their heads' order", errDamagedValue, a, b)
		}
	}
	return nil
}

func validLabel(b []byte) bool {
	return len(b) > 0 && b[len(b)-1] != 0x01 && bytes.IndexByte(b, 0) < 0
}

// split is a labelled key's head and the rest after it; ok is false for
// a key of a table kept as it is.
func split(k []byte) (head, rest []byte, ok bool) {
	if len(k) == 0 || !labelled[k[0]] {
		return nil, nil, false
	}
	n := min(len(k)-1, headLen)
	return k[1 : 1+n], k[1+n:], true
}

// key is the stored form of the engine's key k; known is false when its
// head has no label (no key with that head is held).
func (l *labels) key(k []byte) (stored []byte, known bool) {
	head, rest, ok := split(k)
	if !ok {
		return k, true
	}
	lb, known := l.labelOf[string(head)]
	if !known {
		return nil, false
	}
	return join(k[0], lb, rest), true
}

func join(table byte, label string, rest []byte) []byte {
	out := make([]byte, 0, 2+len(label)+len(rest))
	out = append(append(append(out, table), label...), 0)
	return append(out, rest...)
}

// bound is the stored form of a range's bound b: every held key k is ≥ b
// exactly when its stored form is ≥ bound(b). For a head without a label
// that is the first stored key of the next head that has one, or of the
// next table.
func (l *labels) bound(b []byte) []byte {
	head, rest, ok := split(b)
	if !ok {
		return b
	}
	if lb, known := l.labelOf[string(head)]; known {
		return join(b[0], lb, rest)
	}
	// No key has this head: the first held one after it is of the next
	// head (every head sorting after a shorter head it begins with).
	i := sort.SearchStrings(l.heads, string(head))
	for i < len(l.heads) && l.heads[i] <= string(head) {
		i++
	}
	if i < len(l.heads) {
		return join(b[0], l.labelOf[l.heads[i]], nil)
	}
	if b[0] == 0xff {
		return nil // no table follows (labelled tables are letters)
	}
	return []byte{b[0] + 1}
}

// engineKey is the engine's key a stored key stands for.
func (l *labels) engineKey(stored []byte) ([]byte, error) {
	if len(stored) == 0 || !labelled[stored[0]] {
		return stored, nil
	}
	end := bytes.IndexByte(stored[1:], 0)
	if end < 0 {
		return nil, fmt.Errorf("%w: key %x has no label", errDamagedValue, stored)
	}
	head, ok := l.headOf[string(stored[1:1+end])]
	if !ok {
		return nil, fmt.Errorf("%w: key %x has a label the store does not name", errDamagedValue, stored)
	}
	rest := stored[2+end:]
	out := make([]byte, 0, 1+len(head)+len(rest))
	return append(append(append(out, stored[0]), head...), rest...), nil
}

// with is l with a label for each of heads it has none for, and those
// new (head, label) pairs; l itself is unchanged.
func (l *labels) with(heads [][]byte) (*labels, [][2][]byte) {
	var fresh []string
	for _, h := range heads {
		if _, ok := l.labelOf[string(h)]; !ok && !slices.Contains(fresh, string(h)) {
			fresh = append(fresh, string(h))
		}
	}
	if len(fresh) == 0 {
		return l, nil
	}
	n := &labels{heads: slices.Clone(l.heads), labelOf: make(map[string]string, len(l.labelOf)+len(fresh)),
		headOf: make(map[string]string, len(l.headOf)+len(fresh))}
	for h, lb := range l.labelOf {
		n.labelOf[h], n.headOf[lb] = lb, h
	}
	var made [][2][]byte
	for _, h := range fresh {
		i, _ := slices.BinarySearch(n.heads, h)
		var lo, hi []byte
		if i > 0 {
			lo = []byte(n.labelOf[n.heads[i-1]])
		}
		if i < len(n.heads) {
			hi = []byte(n.labelOf[n.heads[i]])
		}
		lb := between(lo, hi)
		n.heads = slices.Insert(n.heads, i, h)
		n.labelOf[h], n.headOf[string(lb)] = string(lb), h
		made = append(made, [2][]byte{[]byte(h), lb})
	}
	return n, made
}

// between is a short label strictly between lo and hi (nil: no bound),
// both read as base-255 fractions: the mean of the labels between them of
// the fewest digits, its trailing zero digits dropped. Labels made one
// after another in the same gap halve it: a digit more every seven or eight.
func between(lo, hi []byte) []byte {
	long := max(len(lo), len(hi)) + 1
	a := fraction(lo, long)
	b := new(big.Int).Exp(big.NewInt(255), big.NewInt(int64(long)), nil)
	if hi != nil {
		b = fraction(hi, long)
	}
	d := big.NewInt(255)
	for n := 1; ; n++ {
		f := new(big.Int).Exp(d, big.NewInt(int64(long-n)), nil)
		// The labels of n digits after lo and before hi: cLo to cHi.
		cLo := new(big.Int).Quo(a, f)
		cLo.Add(cLo, big.NewInt(1))
		cHi, rem := new(big.Int).QuoRem(b, f, new(big.Int))
		if rem.Sign() == 0 {
			cHi.Sub(cHi, big.NewInt(1))
		}
		if cLo.Cmp(cHi) > 0 {
			continue // n = long always has one: b − a ≥ 255
		}
		m := cLo.Add(cLo, cHi)
		m.Rsh(m, 1)
		digits := make([]byte, n)
		r := new(big.Int)
		for i := n - 1; i >= 0; i-- {
			m.QuoRem(m, d, r)
			digits[i] = byte(r.Int64()) + 1
		}
		for len(digits) > 0 && digits[len(digits)-1] == 0x01 {
			digits = digits[:len(digits)-1]
		}
		return digits
	}
}

// fraction is label x's digits as an integer over 255^n.
func fraction(x []byte, n int) *big.Int {
	v, d := new(big.Int), big.NewInt(255)
	for i := range n {
		v.Mul(v, d)
		if i < len(x) {
			v.Add(v, big.NewInt(int64(x[i])-1))
		}
	}
	return v
}
