package keys

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// ParseExact takes an id only in its canonical text: the one ID.String
// makes.
func TestParseExact(t *testing.T) {
	d := canonical.IDOf([]byte("x"))
	id := d.String()
	if got, ok := ParseExact(id); !ok || got != d {
		t.Fatalf("canonical text refused: %v", ok)
	}
	last := id[len(id)-1]
	bad := []string{
		"", id[:len(id)-1], id + "a", "B" + id[1:], strings.ToUpper(id), id[:5] + strings.ToUpper(id[5:6]) + id[6:],
		"c" + id[1:], id[:len(id)-1] + "1",
	}
	// The last character carries padding bits: the next value up has one
	// set, unless the text already ends in the last value.
	if last != '7' {
		next := last + 1
		if last == 'z' {
			next = '2'
		}
		bad = append(bad, id[:len(id)-1]+string(next))
	}
	for _, s := range bad {
		if _, ok := ParseExact(s); ok {
			t.Errorf("%q taken", s)
		}
		if d, err := canonical.ParseID(s); err == nil && d.String() == s {
			t.Errorf("%q is canonical after all", s)
		}
	}
}

func BenchmarkParseExact(b *testing.B) {
	id := canonical.IDOf([]byte("x")).String()
	for range b.N {
		ParseExact(id)
	}
}
