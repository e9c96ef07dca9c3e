package node

import (
	"strings"
	"testing"
)

// An invite's text comes from whoever hands it over: bad text never
// panics, and what parses is an invite to the space its genesis names.
func FuzzParseInvite(f *testing.F) {
	f.Add("minca-invite:")
	f.Add("minca-invite:e30")
	f.Add("minca-invite:eyJ2IjoxfQ")
	f.Add("not an invite")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := parseInvite(text)
		if err != nil {
			if _, ok := err.(*WriteError); !ok {
				t.Fatalf("a bad invite gave %T, not a *WriteError", err)
			}
			return
		}
		for _, v := range p.history {
			if v.Space != p.g.ID {
				t.Fatal("an invite carries a change of another space")
			}
		}
		if (p.spaceKey != nil) != p.g.Private() {
			t.Fatal("an invite to a private space carries the key in use, and to a public one none")
		}
	})
}

// A cursor comes from a subscriber: bad text never panics, and what
// parses prints back as SEQ.I.
func FuzzParseCursor(f *testing.F) {
	f.Add("0")
	f.Add("12.3")
	f.Add("x.y")
	f.Add("18446744073709551615.0")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCursor(s)
		if err != nil {
			return
		}
		back, err := parseCursor(c.String())
		if err != nil || back != c || !strings.Contains(c.String(), ".") {
			t.Fatalf("%q parsed to %v, which prints as %q", s, c, c.String())
		}
	})
}
