package collection

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

func knownCode(c string) bool { return slices.Contains(Codes(), c) }

// FuzzParseDefinition: any bytes are refused by the JSON reader, or judged
// a definition or invalid with known reasons — never a panic. A valid one
// re-reads the same from its canonical form, and its derived values (tags,
// onePer keys, validation of its own body) compute without panics.
func FuzzParseDefinition(f *testing.F) {
	f.Add([]byte(stdVote))
	f.Add([]byte(`{"name":"app.chat.message","schema":{"type":"object","properties":{"channel":{"type":"string"},"mentions":{"type":"array","items":{"type":"string","x-kind":"did"}}}},"version":3,"history":"all","topics":["channel","mentions","link:in"],"links":{"in":{"to":"*"}}}`))
	f.Add([]byte(`{"name":"app.poll","schema":{"oneOf":[{"const":1,"title":"one"}],"enum":[1,2],"additionalProperties":false},"version":1,"rules":{"fixed":["options"],"final":true},"contract":{"check":[]}}`))
	f.Add([]byte(`{"name":"sys.x","schema":{"pattern":"a","minimum":"0"},"version":0,"rules":{"create":1},"topics":["a.b.c.d.e"]}`))
	f.Add([]byte(`{"name":"a.b","schema":{"items":{"items":{"items":{}}}},"version":1,"rules":{"onePer":["@author","day","link:"]}}`))
	f.Add([]byte(`[]`))
	k, tk := PublicOneKey(testSpace), PublicTagKey(testSpace)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canonical.Parse(data)
		if err != nil {
			return
		}
		d, err := ParseDefinition(v)
		if err != nil {
			var inv *Invalid
			if !errors.As(err, &inv) || len(inv.Reasons) == 0 || len(inv.Reasons) > MaxReasons+1 {
				t.Fatalf("not a list of reasons: %v", err)
			}
			for _, r := range inv.Reasons {
				if !knownCode(r.Code) || !strings.HasPrefix(r.Code, "def/") || !strings.HasPrefix(r.Path, "$") || r.Message == "" {
					t.Fatalf("reason %+v", r)
				}
			}
			return
		}
		out, err := canonical.Marshal(d.Body())
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseDefinition(parse(t, string(out)))
		if err != nil {
			t.Fatalf("canonical form of a valid definition is invalid: %v", err)
		}
		if again.Name != d.Name || again.Version != d.Version || len(again.Topics) != len(d.Topics) ||
			len(again.Rules.OnePer) != len(d.Rules.OnePer) || again.Rules.Final != d.Rules.Final {
			t.Fatal("re-read differently")
		}
		if !ValidName(d.Name) || d.Version < 1 || len(d.Topics) > record.MaxTopics {
			t.Fatalf("a valid definition with %q, %d, %d topics", d.Name, d.Version, len(d.Topics))
		}
		c := Content{Body: v, Links: []record.Link{{Rel: "about", To: "a.b"}, {Rel: "in", To: "c"}}}
		for _, is := range d.Schema.Validate(v) {
			if !knownCode(is.Code) || !strings.HasPrefix(is.Path, "$") {
				t.Fatalf("issue %+v", is)
			}
		}
		tags, err := d.Tags(tk, c)
		if err != nil || len(tags) > record.MaxTags {
			t.Fatalf("tags %v, %v", tags, err)
		}
		if d.Rules.HasOnePer() {
			key, err := d.OnePerKey(k, testRoot, c)
			if err == nil {
				if form, author := record.IsOnePerForm(key); !form || author != d.Rules.OnePerWithAuthor() {
					t.Fatalf("derived key %q is not of the onePer form its rule gives", key)
				}
			} else if !errors.Is(err, ErrNoKey) {
				t.Fatal(err)
			}
		}
		_ = LinkIssues(c.Links, Defined(d), targets{"a.b": "std.poll"})
	})
}

// FuzzValidate: any schema a reader reads validates any body without a
// panic, with known issues at paths into the body, at most MaxIssues+1; a
// schema that passes the publishing check reads the same to a reader.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"choice":{"type":"integer","minimum":0}},"required":["choice"]}`), []byte(`{"choice":-1}`))
	f.Add([]byte(`{"items":{"enum":[1,"a",{"b":null}]},"maxItems":2}`), []byte(`[1,{"b":null},3]`))
	f.Add([]byte(`{"oneOf":[{"const":"a"},{"const":"a"}],"maxLength":1}`), []byte(`"a"`))
	f.Add([]byte(`{"properties":{"a b":{"const":[1]}},"additionalProperties":false}`), []byte(`{"a b":[1.0],"c":null}`))
	f.Add([]byte(`{"pattern":"(a+)+","type":["string","null"],"minLength":"x"}`), []byte(`"\ud800"`))
	f.Fuzz(func(t *testing.T, schema, body []byte) {
		sv, err := canonical.Parse(schema)
		if err != nil {
			return
		}
		bv, err := canonical.Parse(body)
		if err != nil {
			return
		}
		s, err := ReadSchema(sv)
		if err != nil {
			var inv *Invalid
			if !errors.As(err, &inv) || inv.Reasons[0].Code != CodeDefBound {
				t.Fatalf("a reader refuses a schema for other than a bound: %v", err)
			}
			return
		}
		got := s.Validate(bv)
		if len(got) > MaxIssues+1 {
			t.Fatalf("%d issues", len(got))
		}
		for _, is := range got {
			if !knownCode(is.Code) || !strings.HasPrefix(is.Path, "$") || is.Message == "" {
				t.Fatalf("issue %+v", is)
			}
		}
		if strict, err := ParseSchema(sv); err == nil {
			again := strict.Validate(bv)
			a, _ := canonical.Marshal(issuesValue(got))
			b, _ := canonical.Marshal(issuesValue(again))
			if !bytes.Equal(a, b) {
				t.Fatalf("reader and publisher disagree: %s vs %s", a, b)
			}
		}
	})
}

func issuesValue(is []Issue) []any {
	out := make([]any, len(is))
	for i, x := range is {
		out[i] = []any{x.Code, x.Path, x.Message}
	}
	return out
}
