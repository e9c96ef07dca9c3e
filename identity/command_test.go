package identity

import "testing"

func TestCommandCoverage(t *testing.T) {
	cases := []struct {
		granted, wanted string
		want            bool
	}{
		{"/", "/", true},
		{"/", "/record/write", true},
		{"/", "/account/write", true},
		{"/record", "/record", true},
		{"/record", "/record/write", true},
		{"/record", "/record/delete", true},
		{"/record", "/record/read", true},
		{"/record", "/records", false},
		{"/record", "/", false},
		{"/record", "/collection/define", false},
		{"/record", "/account/write", false},
		{"/rec", "/record", false},
		{"/rec", "/record/write", false},
		{"/record/read", "/record/read", true},
		{"/record/read", "/record/write", false},
		{"/record/read", "/record/delete", false},
		{"/record/read", "/record", false},
		{"/record/write", "/record/write", true},
		{"/record/write", "/record/write/more", true},
		{"/record/write", "/record/delete", false},
		{"/record/write", "/record/writer", false},
		{"/account/write", "/record/write", false},
	}
	for _, c := range cases {
		if got := Covers(c.granted, c.wanted); got != c.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", c.granted, c.wanted, got, c.want)
		}
	}
}

func TestCheckCommand(t *testing.T) {
	for _, c := range []string{"/", "/record", "/record/write", "/ほげ/ふが", "/a-b_c.d/1"} {
		if err := CheckCommand(c); err != nil {
			t.Errorf("%q: %v", c, err)
		}
	}
	for _, c := range []string{"", "record", "record/write", "/record/", "//", "/a//b", "/Record", "/a/\xff", " /a", "/a/"} {
		if err := CheckCommand(c); err == nil {
			t.Errorf("%q accepted", c)
		}
	}
}
