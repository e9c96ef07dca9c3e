package identity

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// The arguments of UCAN Delegation §Selectors' example.
const ucanArgs = `{"from": "alice@example.com",
	"to": ["bob@example.com", "carol@not.example.com", "dan@example.com"],
	"cc": ["fraud@example.com"], "title": "Meeting Confirmation",
	"body": "I'll see you on Tuesday", "a.b": {"": 1}, "m": {"z": 3, "a": 1}}`

func TestSelectorSelects(t *testing.T) {
	args := parseJSON(t, ucanArgs)
	cases := []struct {
		sel  string
		want string // canonical JSON, or "!" when it does not resolve
	}{
		{".", ""}, // the whole value, checked below
		{".title", `"Meeting Confirmation"`},
		{".cc", `["fraud@example.com"]`},
		{".to[1]", `"carol@not.example.com"`},
		{".to[-1]", `"dan@example.com"`},
		{".to[-3]", `"bob@example.com"`},
		{".to[-4]", "!"},
		{".to[99]?", `null`},
		{".to[99]", "!"},
		{".to[99]?.x?", `null`},
		{".to[99]?.x", "!"}, // returns early: the optional gave null, .x of null fails
		{".missing", "!"},
		{".missing?", `null`},
		{".missing???", `null`},
		{".missing.deeper?", "!"},
		{`.["a.b"][""]`, `1`},
		{`["a.b"]`, "!"}, // does not start with a dot: refused at parse, see below
		{`.to[1:]`, `["carol@not.example.com","dan@example.com"]`},
		{`.to[:1]`, `["bob@example.com"]`},
		{`.to[0:-1]`, `["bob@example.com","carol@not.example.com"]`},
		{`.to[-2:]`, `["carol@not.example.com","dan@example.com"]`},
		{`.to[5:9]`, `[]`},
		{`.to[2:1]`, `[]`},
		{`.to[]`, `["bob@example.com","carol@not.example.com","dan@example.com"]`},
		{`.m[]`, `[1,3]`}, // an object's values in canonical order of names
		{`.m[][0]`, `1`},
		{`.title[0]`, "!"},
		{`.title[]`, "!"},
		{`.to.x`, "!"},
		{`.to["0"]`, "!"},
		{`.[0]`, "!"},
		{`.?`, ""},
	}
	for _, c := range cases {
		sel, err := ParseSelector(c.sel)
		if c.sel == `["a.b"]` {
			if err == nil {
				t.Errorf("%s parsed", c.sel)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.sel, err)
			continue
		}
		if sel.String() != c.sel {
			t.Errorf("String() = %q", sel.String())
		}
		got, ok := sel.Select(args)
		switch {
		case c.want == "!":
			if ok {
				t.Errorf("%s resolved to %v", c.sel, got)
			}
		case c.want == "":
			if !ok || got != args {
				t.Errorf("%s is not the whole value", c.sel)
			}
		default:
			b, _ := canonical.Marshal(got)
			if !ok || string(b) != c.want {
				t.Errorf("%s = %s (%v), want %s", c.sel, b, ok, c.want)
			}
		}
	}
}

func TestSelectorRefusals(t *testing.T) {
	long := "." + strings.Repeat("a", MaxSelectorLen)
	for _, s := range []string{
		"", "a", "space", "..", "..a", ".a..b", ".a.", ".a[", ".a[0", `.a["x`, `.a["x"`, `.a["x"}`,
		".a[x]", ".a[1.5]", ".a[01]", ".a[-0]", ".a[:]", ".a[1:2:3]", ".a[+1]", ".a[1234567890]",
		".1a", ".a-b", ".a b", ". a", ".a?b", "?", ".??.a", ".a[0]b", `.["\x"]`, `.[1]]`, long,
		`.a["x"y]`, ".a[[0]]", ".é",
	} {
		if sel, err := ParseSelector(s); err == nil {
			t.Errorf("ParseSelector(%q) accepted: %+v", s, sel.segs)
		}
	}
	for _, s := range []string{".", ".a", "._a0", ".A_", ".a.b", ".a[0]", ".a.[0]", ".[0]", `.["é\"x"]`, ".a[-12]", ".a[]?", ".a[1:]", ".a[:-1]", ".a?.b?", "." + strings.Repeat("a", MaxSelectorLen-1)} {
		if _, err := ParseSelector(s); err != nil {
			t.Errorf("ParseSelector(%q): %v", s, err)
		}
	}
}
