package collection

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// Each row: a schema, a body that fits it, and one that does not, with the
// issues it raises (code and path).
var validateRules = []struct {
	rule, schema, fits, misfits string
	issues                      []string
}{
	{"type", `{"type":"string"}`, `"a"`, `1`, []string{"schema/type $"}},
	{"type list", `{"type":["string","null"]}`, `null`, `false`, []string{"schema/type $"}},
	{"integer", `{"type":"integer"}`, `3.0`, `3.5`, []string{"schema/type $"}},
	{"number takes integers", `{"type":"number"}`, `3`, `"3"`, []string{"schema/type $"}},
	{"object", `{"type":"object"}`, `{}`, `[]`, []string{"schema/type $"}},
	{"array", `{"type":"array"}`, `[]`, `{}`, []string{"schema/type $"}},
	{"boolean", `{"type":"boolean"}`, `true`, `"true"`, []string{"schema/type $"}},
	{"null", `{"type":"null"}`, `null`, `0`, []string{"schema/type $"}},
	{"properties", `{"properties":{"a":{"type":"string"}}}`, `{"a":"x","b":1}`, `{"a":1}`, []string{"schema/type $.a"}},
	{"properties path quoting", `{"properties":{"a b":{"type":"string"}}}`, `{"a b":"x"}`, `{"a b":1}`, []string{`schema/type $["a b"]`}},
	{"required", `{"required":["a","b"]}`, `{"a":null,"b":0}`, `{"a":1}`, []string{"schema/required $.b"}},
	{"required ignores non-objects", `{"required":["a"]}`, `"x"`, `{}`, []string{"schema/required $.a"}},
	{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, `{"a":1,"b":2}`, []string{"schema/additionalProperties $.b"}},
	{"additionalProperties true", `{"properties":{"a":{"type":"string"}},"additionalProperties":true}`, `{"a":"x","b":2}`, `{"a":2}`, []string{"schema/type $.a"}},
	{"items", `{"items":{"type":"integer"}}`, `[1,2]`, `[1,"2",3.5]`, []string{"schema/type $[1]", "schema/type $[2]"}},
	{"nested items and properties", `{"properties":{"l":{"items":{"properties":{"n":{"maximum":3}}}}}}`, `{"l":[{"n":3}]}`, `{"l":[{"n":3},{"n":4}]}`, []string{"schema/maximum $.l[1].n"}},
	{"enum", `{"enum":["a",1,{"x":[true]}]}`, `{"x":[true]}`, `"b"`, []string{"schema/enum $"}},
	{"enum compares canonical forms", `{"enum":[1,{"a":1,"b":2}]}`, `{"b":2.0,"a":1e0}`, `1.5`, []string{"schema/enum $"}},
	{"const", `{"const":{"a":null}}`, `{"a":null}`, `{"a":false}`, []string{"schema/const $"}},
	{"const absent is not null", `{"properties":{"a":{"const":null}}}`, `{}`, `{"a":0}`, []string{"schema/const $.a"}},
	{"minimum", `{"minimum":0}`, `0`, `-0.5`, []string{"schema/minimum $"}},
	{"maximum", `{"maximum":10}`, `10`, `10.5`, []string{"schema/maximum $"}},
	{"numbers only", `{"minimum":5,"maxLength":1}`, `"x"`, `4`, []string{"schema/minimum $"}},
	{"minLength", `{"minLength":2}`, `"ab"`, `"a"`, []string{"schema/minLength $"}},
	{"maxLength code points", `{"maxLength":2}`, `"é😀"`, `"abc"`, []string{"schema/maxLength $"}},
	{"maxLength lone surrogate is one", `{"maxLength":1}`, `"\ud800"`, `"\ud800\ud800"`, []string{"schema/maxLength $"}},
	{"minItems", `{"minItems":1}`, `[0]`, `[]`, []string{"schema/minItems $"}},
	{"maxItems", `{"maxItems":1}`, `[0]`, `[0,1]`, []string{"schema/maxItems $"}},
	{"oneOf", `{"oneOf":[{"const":"a","title":"A"},{"const":"b"}]}`, `"b"`, `"c"`, []string{"schema/oneOf $"}},
	{"oneOf exactly one", `{"oneOf":[{"const":"a"},{"const":"a"},{"const":"b"}]}`, `"b"`, `"a"`, []string{"schema/oneOf $"}},
	{"annotations say nothing", `{"type":"integer","x-choicesFrom":{"rel":"about","field":"options"},"x-kind":"count","title":"T"}`, `1`, `"1"`, []string{"schema/type $"}},
}

func TestValidate(t *testing.T) {
	for _, r := range validateRules {
		t.Run(r.rule, func(t *testing.T) {
			s, err := ParseSchema(parse(t, r.schema))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Validate(parse(t, r.fits)); got != nil {
				t.Fatalf("%s should fit %s: %v", r.fits, r.schema, got)
			}
			wantIssues(t, s.Validate(parse(t, r.misfits)), r.issues...)
		})
	}
}

func TestValidateIssuesAreCapped(t *testing.T) {
	s, _ := ParseSchema(parse(t, `{"items":{"type":"string"}}`))
	body := make([]any, 100_000)
	for i := range body {
		body[i] = float64(i)
	}
	got := s.Validate(body)
	if len(got) != MaxIssues+1 || got[MaxIssues].Code != CodeSchemaMore || got[0].Path != "$[0]" {
		t.Fatalf("%d issues, last %v", len(got), got[len(got)-1])
	}
	if got := s.Validate(body[:3]); len(got) != 3 {
		t.Fatalf("%v", got)
	}
}

// Issues carry messages that name the rule.
func TestValidateMessages(t *testing.T) {
	s, _ := ParseSchema(parse(t, `{"type":"object","required":["choice"],"properties":{"choice":{"type":"integer","minimum":0}}}`))
	got := s.Validate(parse(t, `{"choice":-1}`))
	if len(got) != 1 || !strings.Contains(got[0].Message, "minimum 0") || !strings.Contains(got[0].String(), "$.choice") {
		t.Fatalf("%v", got)
	}
	got = s.Validate(parse(t, `[]`))
	if len(got) != 1 || !strings.Contains(got[0].Message, "object") {
		t.Fatalf("%v", got)
	}
}

// A body as deep as the JSON reader allows is walked only as deep as the
// schema goes.
func TestValidateDeepBody(t *testing.T) {
	deep := strings.Repeat(`{"a":`, canonical.MaxDepth-1) + `1` + strings.Repeat(`}`, canonical.MaxDepth-1)
	s, _ := ParseSchema(nested(MaxSchemaDepth - 1))
	wantIssues(t, s.Validate(parse(t, deep)), "schema/type $"+strings.Repeat(".a", MaxSchemaDepth-1))
	enum, _ := ParseSchema(parse(t, `{"enum":[1]}`))
	wantIssues(t, enum.Validate(parse(t, deep)), "schema/enum $")
}

// A schema and a body that are each cheap to read can't ask for their
// product: validation stops after MaxValidateSteps.
func TestValidateWorkIsBounded(t *testing.T) {
	req := make([]any, 10_000)
	for i := range req {
		req[i] = "r" + itoa(i)
	}
	s, err := ParseSchema(canonical.NewObject("items", canonical.NewObject("required", req)))
	if err != nil {
		t.Fatal(err)
	}
	body := make([]any, 10_000)
	for i := range body {
		body[i] = canonical.NewObject("r0", 1.0)
	}
	got := s.Validate(body)
	if len(got) != MaxIssues+1 || got[MaxIssues].Code != CodeSchemaMore {
		t.Fatalf("%d issues", len(got))
	}
	// With no issue to list, the step budget alone stops it.
	full := canonical.NewObject()
	for _, r := range req {
		full.Members = append(full.Members, canonical.Member{Name: r.(string), Value: 1.0})
	}
	for i := range body {
		body[i] = full
	}
	got = s.Validate(body)
	if len(got) != 1 || got[0].Code != CodeSchemaMore {
		t.Fatalf("%v", got)
	}
	if got := s.Validate(body[:10]); got != nil {
		t.Fatalf("ten objects with every required member: %v", got)
	}
}
