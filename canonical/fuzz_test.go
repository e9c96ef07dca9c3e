package canonical

import (
	"bytes"
	"testing"
)

// FuzzParse: any bytes either are refused with an *Error or read into a
// value whose canonical form reads back to the same canonical form.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"b":[1,"x",null,true,{"c":1.5e21}],"a":"é\ud800","B":-0,"10":1,"9":2,"Z":0.1}`,
		`[]`, `{}`, `""`, `0`, `-0.0e-0`, `1e308`, `"\uD83D\uDE00\uDE00"`, `{"a":{"a":[{}]}}`,
		`[1,2,3,"\u0000\u001f\"\\\/"]`, "\"\u2028\"", `{"a":1,"a":1}`, `[[[[[[`, `1e999`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		out, err := Marshal(v)
		if err != nil {
			t.Fatalf("parsed value does not write: %v", err)
		}
		v2, err := Parse(out)
		if err != nil {
			t.Fatalf("canonical form %q does not read back: %v", out, err)
		}
		out2, err := Marshal(v2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("not stable: %q then %q (%v)", out, out2, err)
		}
	})
}

// FuzzString: every WTF-8 string survives writing and reading unchanged.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a", "\x00", "é", "\xed\xa0\x80", "😀", "\"\\", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := AppendString(nil, s)
		if err != nil {
			return // not WTF-8: refused, which is right
		}
		v, err := Parse(out)
		if err != nil {
			t.Fatalf("%q written as %q does not read back: %v", s, out, err)
		}
		if v.(string) != s {
			t.Fatalf("%q came back as %q", s, v)
		}
	})
}

// FuzzID: ParseID never panics, and what it accepts writes back in lower case.
func FuzzID(f *testing.F) {
	f.Add("bvtkn4kg5z6qhfqvovhxypxvm767aqz6llyd67wztupdwixpfl7xa")
	f.Add("BVTKN4KG5Z6QHFQVOVHXYPXVM767AQZ6LLYD67WZTUPDWIXPFL7XA")
	f.Add("b")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		if got := id.String(); !bytes.EqualFold([]byte(got), []byte(s)) || got[0] != 'b' {
			t.Fatalf("%q decoded and re-encoded as %q", s, got)
		}
	})
}
