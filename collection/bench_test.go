package collection

import (
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

func BenchmarkParseDefinition(b *testing.B) {
	v := parse(b, stdVote)
	for b.Loop() {
		if _, err := ParseDefinition(v); err != nil {
			b.Fatal(err)
		}
	}
}

// A definition at the enum bound: the cost of the largest schema we take.
func BenchmarkParseDefinitionEnumAtBound(b *testing.B) {
	enum := make([]any, MaxEnum)
	for i := range enum {
		enum[i] = "value-" + itoa(i)
	}
	v := canonical.NewObject("name", "a.b", "version", 1.0, "schema", canonical.NewObject("enum", enum))
	for b.Loop() {
		if _, err := ParseDefinition(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	d := mustDef(b, stdVote)
	body := parse(b, `{"choice":3}`)
	for b.Loop() {
		if d.Schema.Validate(body) != nil {
			b.Fatal("issues")
		}
	}
}

func BenchmarkOnePerKey(b *testing.B) {
	d := mustDef(b, stdVote)
	k := PublicOneKey(testSpace)
	c := Content{Links: []record.Link{{Rel: "about", To: testOwner + ".poll"}}}
	for b.Loop() {
		if _, err := d.OnePerKey(k, testRoot, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTags(b *testing.B) {
	d := mustDef(b, `{"name":"app.chat.message","schema":{},"version":1,"topics":["channel","mentions"]}`)
	k := PublicTagKey(testSpace)
	c := Content{Body: parse(b, `{"channel":"design","mentions":["a","b","c"]}`)}
	for b.Loop() {
		if _, err := d.Tags(k, c); err != nil {
			b.Fatal(err)
		}
	}
}
