package collection

import (
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
)

// Each row is one keyword of the publishing subset (02 §6.2): a schema that
// uses it well, and one that does not, refused at its path.
var schemaRules = []struct {
	rule      string
	good, bad string
	path      string
}{
	{"type one", `{"type":"string"}`, `{"type":"text"}`, "$.type"},
	{"type list", `{"type":["string","null"]}`, `{"type":["string","date"]}`, "$.type[1]"},
	{"type non-empty list", `{"type":["object"]}`, `{"type":[]}`, "$.type"},
	{"type string or list", `{"type":"integer"}`, `{"type":7}`, "$.type"},
	{"properties object", `{"properties":{"a":{}}}`, `{"properties":[]}`, "$.properties"},
	{"properties of schemas", `{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":"string"}}`, "$.properties.a"},
	{"properties recursively", `{"properties":{"a":{"properties":{"b":{"maxLength":3}}}}}`, `{"properties":{"a":{"properties":{"b":{"format":"email"}}}}}`, "$.properties.a.properties.b.format"},
	{"required list", `{"required":[]}`, `{"required":"a"}`, "$.required"},
	{"required strings", `{"required":["a","b"]}`, `{"required":["a",1]}`, "$.required[1]"},
	{"items one schema", `{"items":{"type":"string"}}`, `{"items":[{"type":"string"}]}`, "$.items"},
	{"items recursively", `{"items":{"items":{"enum":[1]}}}`, `{"items":{"items":{"$ref":"#"}}}`, `$.items.items["$ref"]`},
	{"enum non-empty list", `{"enum":[1,"a",null,{"x":[]}]}`, `{"enum":[]}`, "$.enum"},
	{"enum a list", `{"enum":[1]}`, `{"enum":1}`, "$.enum"},
	{"const any", `{"const":{"a":[1,null]}}`, `{"const":1,"contains":{}}`, "$.contains"},
	{"minimum number", `{"minimum":0}`, `{"minimum":"0"}`, "$.minimum"},
	{"maximum number", `{"maximum":-1.5}`, `{"maximum":null}`, "$.maximum"},
	{"minLength number", `{"minLength":1}`, `{"minLength":true}`, "$.minLength"},
	{"maxLength number", `{"maxLength":10}`, `{"maxLength":[10]}`, "$.maxLength"},
	{"minItems number", `{"minItems":1}`, `{"minItems":{}}`, "$.minItems"},
	{"maxItems number", `{"maxItems":3}`, `{"maxItems":"3"}`, "$.maxItems"},
	{"additionalProperties boolean", `{"additionalProperties":false}`, `{"additionalProperties":{"type":"string"}}`, "$.additionalProperties"},
	{"title string", `{"title":"T"}`, `{"title":1}`, "$.title"},
	{"description string", `{"description":"D"}`, `{"description":[]}`, "$.description"},
	{"oneOf labelled choices", `{"oneOf":[{"const":"a","title":"A"},{"const":"b","description":"B"}]}`, `{"oneOf":[{"type":"string"}]}`, "$.oneOf[0].type"},
	{"oneOf const required", `{"oneOf":[{"const":null}]}`, `{"oneOf":[{"title":"A"}]}`, "$.oneOf[0]"},
	{"oneOf non-empty list", `{"oneOf":[{"const":1}]}`, `{"oneOf":[]}`, "$.oneOf"},
	{"oneOf choices are objects", `{"oneOf":[{"const":1}]}`, `{"oneOf":[1]}`, "$.oneOf[0]"},
	{"oneOf title string", `{"oneOf":[{"const":1,"title":"one"}]}`, `{"oneOf":[{"const":1,"title":1}]}`, "$.oneOf[0].title"},
	{"x-choicesFrom", `{"x-choicesFrom":{"rel":"about","field":"options"}}`, `{"x-choicesFrom":{"rel":"about"}}`, `$["x-choicesFrom"]`},
	{"x-choicesFrom rel", `{"x-choicesFrom":{"field":"options","rel":"aboutIt"}}`, `{"x-choicesFrom":{"rel":"About","field":"options"}}`, `$["x-choicesFrom"].rel`},
	{"x-… annotations, any value", `{"x-kind":"did","x-money":{"currency":"EUR"},"x-n":[1,null]}`, `{"kind":"did"}`, "$.kind"},
	{"no pattern", `{"type":"string"}`, `{"type":"string","pattern":"^(a+)+$"}`, "$.pattern"},
	{"no format", `{"type":"string","x-format":"email"}`, `{"format":"date-time"}`, "$.format"},
	{"no $ref", `{}`, `{"$ref":"#/defs/a"}`, `$["$ref"]`},
	{"no $schema", `{}`, `{"$schema":"https://json-schema.org/draft/2020-12/schema"}`, `$["$schema"]`},
	{"no anyOf", `{}`, `{"anyOf":[{"const":1}]}`, "$.anyOf"},
	{"no allOf", `{}`, `{"allOf":[{}]}`, "$.allOf"},
	{"schema an object", `{"items":{}}`, `{"items":true}`, "$.items"},
}

func TestSchemaPublishingSubset(t *testing.T) {
	for _, r := range schemaRules {
		t.Run(r.rule, func(t *testing.T) {
			if _, err := ParseSchema(parse(t, r.good)); err != nil {
				t.Fatalf("good %s: %v", r.good, err)
			}
			_, err := ParseSchema(parse(t, r.bad))
			inv, ok := err.(*Invalid)
			if !ok {
				t.Fatalf("bad %s accepted", r.bad)
			}
			for _, x := range inv.Reasons {
				if x.Code == CodeDefSchema && x.Path == r.path {
					return
				}
			}
			t.Fatalf("bad %s: want def/schema at %s, got %v", r.bad, r.path, inv.Reasons)
		})
	}
}

// A definition reports schema reasons with the path inside the definition.
func TestSchemaReasonsInDefinition(t *testing.T) {
	_, err := ParseDefinition(parse(t, `{"name":"a.b","version":1,"schema":{"properties":{"n":{"minimum":"0"}},"pattern":"a"}}`))
	wantReason(t, err, CodeDefSchema, "$.schema.properties.n.minimum")
	wantReason(t, err, CodeDefSchema, "$.schema.pattern")
	if !strings.Contains(err.(*Invalid).Reasons[0].Message, "finite number") {
		t.Fatal(err)
	}
}

// nested builds a schema nested n deep through properties, in Go, without
// the JSON reader's depth bound.
func nested(n int) any {
	var s any = canonical.NewObject("type", "string")
	for i := 0; i < n; i++ {
		s = canonical.NewObject("properties", canonical.NewObject("a", s))
	}
	return s
}

// Bad input of the issue: each judged in bounded time and memory.
func TestSchemaBounds(t *testing.T) {
	start := time.Now()

	// Nested 10,000 deep as JSON: the reader refuses it before we see it.
	deep := strings.Repeat(`{"items":`, 10_000) + `{}` + strings.Repeat(`}`, 10_000)
	if _, err := canonical.Parse([]byte(deep)); err == nil || err.(*canonical.Error).Code != canonical.CodeDepth {
		t.Fatalf("the JSON reader takes a schema nested 10,000 deep: %v", err)
	}
	// Nested 10,000 deep as a value built in Go: our own bound.
	_, err := ParseSchema(nested(10_000))
	wantReason(t, err, CodeDefBound, "$"+strings.Repeat(".properties.a", MaxSchemaDepth))
	if n := len(err.(*Invalid).Reasons); n != 1 {
		t.Fatalf("want one bound reason, got %d", n)
	}
	if _, err := ParseSchema(nested(MaxSchemaDepth - 1)); err != nil {
		t.Fatalf("a schema %d deep is within the bound: %v", MaxSchemaDepth, err)
	}
	// The same through items, in a definition.
	var items any = canonical.NewObject()
	for i := 0; i < 500; i++ {
		items = canonical.NewObject("items", items)
	}
	_, err = ParseDefinition(canonical.NewObject("name", "a.b", "version", 1.0, "schema", items))
	wantReason(t, err, CodeDefBound, "$.schema.items.items")

	// An enum of a million entries.
	million := make([]any, 1_000_000)
	for i := range million {
		million[i] = float64(i)
	}
	_, err = ParseSchema(canonical.NewObject("enum", million))
	wantReason(t, err, CodeDefBound, "$.enum")
	if !strings.Contains(err.Error(), "1000000") {
		t.Fatal(err)
	}
	atBound := make([]any, MaxEnum)
	for i := range atBound {
		atBound[i] = float64(i)
	}
	s, err := ParseSchema(canonical.NewObject("enum", atBound))
	if err != nil {
		t.Fatalf("an enum of %d is within the bound: %v", MaxEnum, err)
	}
	if s.Validate(float64(MaxEnum-1)) != nil || s.Validate(float64(MaxEnum)) == nil {
		t.Fatal("enum at the bound does not validate")
	}
	choices := make([]any, MaxEnum+1)
	for i := range choices {
		choices[i] = canonical.NewObject("const", float64(i))
	}
	_, err = ParseSchema(canonical.NewObject("oneOf", choices))
	wantReason(t, err, CodeDefBound, "$.oneOf")

	// Not a timing assertion: a guard that none of this ran away.
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("bounded inputs took %v", d)
	}
}

// A reader ignores keywords it does not know (§6.2, §9.6); bounds still hold.
func TestReadSchemaIgnoresUnknown(t *testing.T) {
	s, err := ReadSchema(parse(t, `{"type":"object","pattern":"^(a+)+$","format":"email","$ref":"#",
		"properties":{"n":{"type":"integer","minimum":"zero","maximum":10,"anyOf":[]}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	wantIssues(t, s.Validate(parse(t, `{"n":11}`)), "schema/maximum $.n")
	wantIssues(t, s.Validate(parse(t, `{}`)), "schema/required $.n")
	if s.Validate(parse(t, `{"n":-5}`)) != nil {
		t.Fatal("a minimum that is a string is ignored by a reader")
	}
	_, err = ReadSchema(nested(1000))
	wantReason(t, err, CodeDefBound, "$")
}
