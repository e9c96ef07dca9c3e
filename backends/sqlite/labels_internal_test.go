package sqlite

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// A label made between two others sorts strictly between them, ended by
// 0x00 as stored, whatever order heads arrive in: at random, each new one
// the smallest yet (every label made in the same gap), or the largest.
func TestBetween(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	orders := map[string]func(i int) string{
		"random":     func(int) string { return fmt.Sprintf("%033d", r.Uint64()) },
		"descending": func(i int) string { return fmt.Sprintf("%033d", 1_000_000-i) },
		"ascending":  func(i int) string { return fmt.Sprintf("%033d", i) },
	}
	for name, next := range orders {
		l := newLabels()
		for i := range 1000 {
			var made [][2][]byte
			l, made = l.with([][]byte{[]byte(next(i))})
			for _, m := range made {
				if !validLabel(m[1]) {
					t.Fatalf("%s: label %x", name, m[1])
				}
			}
		}
		if err := l.ordered(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		longest := 0
		for i := 1; i < len(l.heads); i++ {
			a, b := l.labelOf[l.heads[i-1]]+"\x00", l.labelOf[l.heads[i]]+"\x00"
			if a >= b {
				t.Fatalf("%s: stored labels %x, %x out of order", name, a, b)
			}
			longest = max(longest, len(b))
		}
		// Labels made one after another in one gap halve it: a
		// digit (8 bits) more every seven or eight.
		if longest > 1000/6 {
			t.Fatalf("%s: a label of %d bytes", name, longest)
		}
		t.Logf("%s: longest label %d bytes", name, longest)
	}
}

// Stored keys sort as the engine's keys, every range of the engine's
// keys is the range of stored keys between the bounds' stored forms,
// and a stored key reads back as the engine's: for keys of labelled
// tables of every length (heads shorter than a tag too) and of others.
func TestLabelledOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tags := make([][]byte, 6)
	for i := range tags {
		tags[i] = make([]byte, headLen)
		for j := range tags[i] {
			tags[i][j] = byte(r.IntN(4)) // few distinct bytes: heads share prefixes
		}
	}
	key := func() []byte {
		table := []byte("hoaevS_xl")[r.IntN(9)]
		k := []byte{table}
		switch r.IntN(5) {
		case 0: // shorter than a tag
			for range r.IntN(headLen) {
				k = append(k, byte(r.IntN(4)))
			}
			return k
		default:
			k = append(k, tags[r.IntN(len(tags))]...)
		}
		for range r.IntN(6) {
			k = append(k, byte(r.IntN(3)))
		}
		return k
	}
	var held [][]byte
	for range 400 {
		held = append(held, key())
	}
	l := newLabels()
	var heads [][]byte
	for _, k := range held {
		if h, _, ok := split(k); ok {
			heads = append(heads, h)
		}
	}
	l, _ = l.with(heads)
	stored := func(k []byte) []byte {
		s, ok := l.key(k)
		if !ok {
			t.Fatalf("held key %x has no label", k)
		}
		return s
	}
	for _, a := range held {
		back, err := l.engineKey(stored(a))
		if err != nil || !bytes.Equal(back, a) {
			t.Fatalf("%x reads back as %x, %v", a, back, err)
		}
		for _, b := range held[:50] {
			if got, want := bytes.Compare(stored(a), stored(b)), bytes.Compare(a, b); got != want {
				t.Fatalf("%x against %x: stored %d, engine's %d", a, b, got, want)
			}
		}
	}
	for range 600 {
		b := key() // a bound: held or not
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b)+1)]
		}
		sb := l.bound(b)
		for _, k := range held {
			in := bytes.Compare(k, b) >= 0
			if sb == nil {
				if in {
					t.Fatalf("bound %x: past every table, yet %x ≥ it", b, k)
				}
				continue
			}
			if got := bytes.Compare(stored(k), sb) >= 0; got != in {
				t.Fatalf("bound %x (stored %x): key %x ≥ it %v, stored %v", b, sb, k, in, got)
			}
		}
	}
	// A key of a head without a label is not held.
	unknown := append([]byte{'h'}, bytes.Repeat([]byte{9}, headLen+3)...)
	if _, ok := l.key(unknown); ok {
		t.Fatal("a key of an unlabelled head is held")
	}
	if _, err := l.engineKey([]byte("h\xfe\xfe\x00rest")); err == nil {
		t.Fatal("a stored key of a label not named reads")
	}
	if !slices.IsSorted(l.heads) {
		t.Fatal("heads not sorted")
	}
}
