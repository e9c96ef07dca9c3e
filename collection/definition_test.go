package collection

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// Each row is one rule of 02 §5.2, §6.1, §7.5 or §8.1: a definition that
// passes it, and one that fails it with its code at its path.
var definitionRules = []struct {
	rule       string
	good, bad  string // members besides name, schema and version unless they name them
	code, path string
}{
	{"name pattern", `"name":"app.todo-list.item"`, `"name":"App.todo"`, CodeDefName, "$.name"},
	{"name has a dot", `"name":"a.b"`, `"name":"todo"`, CodeDefName, "$.name"},
	{"name segment starts with a letter", `"name":"a.b2"`, `"name":"a.2b"`, CodeDefName, "$.name"},
	{"name is a string", `"name":"a.b"`, `"name":7`, CodeDefName, "$.name"},
	{"sys.* reserved", `"name":"system.collection"`, `"name":"sys.thing"`, CodeDefName, "$.name"},
	{"std.* not reserved", `"name":"std.vote"`, `"name":"std"`, CodeDefName, "$.name"},
	{"title a string", `"title":"T"`, `"title":["T"]`, CodeDefTitle, "$.title"},
	{"description a string", `"description":"D"`, `"description":null`, CodeDefDescription, "$.description"},
	{"schema an object", `"schema":{}`, `"schema":"object"`, CodeDefSchema, "$.schema"},
	{"version from 1", `"version":1`, `"version":0`, CodeDefVersion, "$.version"},
	{"version whole", `"version":12`, `"version":1.5`, CodeDefVersion, "$.version"},
	{"version a number", `"version":2`, `"version":"2"`, CodeDefVersion, "$.version"},
	{"history latest", `"history":"latest"`, `"history":"some"`, CodeDefHistory, "$.history"},
	{"history all", `"history":"all"`, `"history":true`, CodeDefHistory, "$.history"},
	{"links an object", `"links":{}`, `"links":[]`, CodeDefLinks, "$.links"},
	{"link role pattern", `"links":{"replyTo":{"to":"*"}}`, `"links":{"ReplyTo":{"to":"*"}}`, CodeDefLinks, "$.links.ReplyTo"},
	{"link declaration an object", `"links":{"a":{"to":"*"}}`, `"links":{"a":"*"}`, CodeDefLinks, "$.links.a"},
	{"link to star", `"links":{"a":{"to":"*"}}`, `"links":{"a":{"to":"any"}}`, CodeDefLinks, "$.links.a.to"},
	{"link to non-empty list", `"links":{"a":{"to":["std.poll"]}}`, `"links":{"a":{"to":[]}}`, CodeDefLinks, "$.links.a.to"},
	{"link to strings", `"links":{"a":{"to":["x.y","z.w"]}}`, `"links":{"a":{"to":["x.y",1]}}`, CodeDefLinks, "$.links.a.to[1]"},
	{"link to required", `"links":{"a":{"to":"*"}}`, `"links":{"a":{"cardinality":"one"}}`, CodeDefLinks, "$.links.a.to"},
	{"cardinality one", `"links":{"a":{"to":"*","cardinality":"one"}}`, `"links":{"a":{"to":"*","cardinality":"single"}}`, CodeDefLinks, "$.links.a.cardinality"},
	{"cardinality many", `"links":{"a":{"to":"*","cardinality":"many"}}`, `"links":{"a":{"to":"*","cardinality":2}}`, CodeDefLinks, "$.links.a.cardinality"},
	{"link description a string", `"links":{"a":{"to":"*","description":"d"}}`, `"links":{"a":{"to":"*","description":{}}}`, CodeDefLinks, "$.links.a.description"},
	{"rules an object", `"rules":{}`, `"rules":[]`, CodeDefRules, "$.rules"},
	{"onePer non-empty", `"rules":{"onePer":["@author"]}`, `"rules":{"onePer":[]}`, CodeDefRules, "$.rules.onePer"},
	{"onePer strings", `"rules":{"onePer":["link:about","day"]}`, `"rules":{"onePer":["day",3]}`, CodeDefRules, "$.rules.onePer[1]"},
	{"onePer non-empty strings", `"rules":{"onePer":["x"]}`, `"rules":{"onePer":[""]}`, CodeDefRules, "$.rules.onePer[0]"},
	{"onePer a list", `"rules":{"onePer":["x"]}`, `"rules":{"onePer":"x"}`, CodeDefRules, "$.rules.onePer"},
	{"fixed non-empty", `"rules":{"fixed":["options"]}`, `"rules":{"fixed":[]}`, CodeDefRules, "$.rules.fixed"},
	{"fixed strings", `"rules":{"fixed":["a","b"]}`, `"rules":{"fixed":["a",""]}`, CodeDefRules, "$.rules.fixed[1]"},
	{"final true", `"rules":{"final":true}`, `"rules":{"final":false}`, CodeDefRules, "$.rules.final"},
	{"no create rule", `"rules":{"onePer":["x"]}`, `"rules":{"create":"anyone"}`, CodeDefRules, "$.rules.create"},
	{"no edit rule", `"rules":{"fixed":["x"]}`, `"rules":{"edit":"creator"}`, CodeDefRules, "$.rules.edit"},
	{"no delete rule", `"rules":{"final":true}`, `"rules":{"delete":"nobody"}`, CodeDefRules, "$.rules.delete"},
	{"no check rule", `"rules":{}`, `"rules":{"check":[]}`, CodeDefRules, "$.rules.check"},
	{"no permissions", `"rules":{}`, `"rules":{"permissions":{}}`, CodeDefRules, "$.rules.permissions"},
	{"no other rule", `"rules":{}`, `"rules":{"unique":["x"]}`, CodeDefRules, "$.rules.unique"},
	{"topics a list", `"topics":[]`, `"topics":"channel"`, CodeDefTopics, "$.topics"},
	{"topic field path", `"topics":["channel","a_1.b.c.D"]`, `"topics":["1channel"]`, CodeDefTopics, "$.topics[0]"},
	{"topic at most four segments", `"topics":["a.b.c.d"]`, `"topics":["a.b.c.d.e"]`, CodeDefTopics, "$.topics[0]"},
	{"topic segment at most 64", `"topics":["` + strings.Repeat("a", 64) + `"]`, `"topics":["` + strings.Repeat("a", 65) + `"]`, CodeDefTopics, "$.topics[0]"},
	{"topic link role", `"topics":["link:channel"]`, `"topics":["link:Channel"]`, CodeDefTopics, "$.topics[0]"},
	{"topic empty segment", `"topics":["a.b"]`, `"topics":["a..b"]`, CodeDefTopics, "$.topics[0]"},
	{"topics distinct", `"topics":["a","b"]`, `"topics":["a","b","a"]`, CodeDefTopics, "$.topics[2]"},
	{"topics at most 8", `"topics":["a","b","c","d","e","f","g","h"]`, `"topics":["a","b","c","d","e","f","g","h","i"]`, CodeDefTopics, "$.topics"},
	{"topic a string", `"topics":["a"]`, `"topics":[1]`, CodeDefTopics, "$.topics[0]"},
}

func TestDefinitionRules(t *testing.T) {
	build := func(members string) string {
		base := map[string]string{"name": `"name":"app.x"`, "schema": `"schema":{}`, "version": `"version":1`}
		out := "{" + members
		for k, v := range base {
			if !strings.Contains(members, `"`+k+`":`) {
				out += "," + v
			}
		}
		return out + "}"
	}
	for _, r := range definitionRules {
		t.Run(r.rule, func(t *testing.T) {
			if _, err := ParseDefinition(parse(t, build(r.good))); err != nil {
				t.Fatalf("good %s: %v", r.good, err)
			}
			_, err := ParseDefinition(parse(t, build(r.bad)))
			wantReason(t, err, r.code, r.path)
		})
	}
}

func TestDefinitionRequiredMembers(t *testing.T) {
	_, err := ParseDefinition(parse(t, `{"title":"only a title"}`))
	wantReason(t, err, CodeDefName, "$.name")
	wantReason(t, err, CodeDefSchema, "$.schema")
	wantReason(t, err, CodeDefVersion, "$.version")
	if n := len(err.(*Invalid).Reasons); n != 3 {
		t.Fatalf("want every reason, 3, got %d", n)
	}
	_, err = ParseDefinition(parse(t, `["not","an","object"]`))
	wantReason(t, err, CodeDefObject, "$")
}

// Every reason is listed, not only the first.
func TestDefinitionListsEveryReason(t *testing.T) {
	_, err := ParseDefinition(parse(t, `{"name":"sys.x","schema":{"pattern":"^a","properties":{"n":{"minimum":"0"}}},"version":0,
		"rules":{"create":1},"topics":["a.b.c.d.e"],"history":"x","links":{"a":{}}}`))
	inv := err.(*Invalid)
	codes := map[string]bool{}
	for _, r := range inv.Reasons {
		codes[r.Code] = true
	}
	for _, c := range []string{CodeDefName, CodeDefSchema, CodeDefVersion, CodeDefRules, CodeDefTopics, CodeDefHistory, CodeDefLinks} {
		if !codes[c] {
			t.Errorf("missing %s in %v", c, inv.Reasons)
		}
	}
	wantReason(t, err, CodeDefSchema, "$.schema.pattern")
	wantReason(t, err, CodeDefSchema, "$.schema.properties.n.minimum")
	if !strings.Contains(err.Error(), "invalid definition") {
		t.Fatal(err.Error())
	}
}

// Members §6.1 does not list are ignored; contract is kept, never read,
// whatever its type (§7.6).
func TestDefinitionIgnoresUnknownAndKeepsContract(t *testing.T) {
	for _, contract := range []string{`{"check":[{"that":"x","else":"y"}]}`, `7`, `"anything"`, `null`, `[1,{"line":2}]`} {
		d := def(t, "app.poll", `"contract":`+contract+`,"icon":"🗳","x-future":{"a":1}`)
		if !d.HasContract {
			t.Fatalf("contract %s not kept", contract)
		}
		got, _ := canonical.Marshal(d.Contract)
		want, _ := canonical.Marshal(parse(t, contract))
		if string(got) != string(want) {
			t.Fatalf("contract %s kept as %s", want, got)
		}
	}
	d := def(t, "app.poll", "")
	if d.HasContract || d.Rules.HasOnePer() || d.Rules.Final || d.Topics != nil || len(d.Links) != 0 {
		t.Fatalf("%+v", d)
	}
}

// A body that is valid keeps every member for its canonical form (§6.3:
// rivals with the same body agree).
func TestDefinitionBodyKept(t *testing.T) {
	body := parse(t, stdVote)
	d, err := ParseDefinition(body)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := canonical.Marshal(d.Body())
	b, _ := canonical.Marshal(body)
	if string(a) != string(b) {
		t.Fatal("body not kept as given")
	}
}

// 02 §6.1: the record's own checks.
func TestParseDefinitionVersion(t *testing.T) {
	body := parse(t, stdVote)
	good := ver(t, `"collection":"sys.collection","key":"collection:std.vote","retain":true,"body":`+stdVote)
	if d, err := ParseDefinitionVersion(good, body); err != nil || d.Name != "std.vote" {
		t.Fatalf("%v", err)
	}
	_, err := ParseDefinitionVersion(ver(t, `"collection":"sys.collection","key":"collection:std.poll","retain":true,"body":`+stdVote), body)
	wantReason(t, err, CodeDefKey, "key")
	_, err = ParseDefinitionVersion(ver(t, `"collection":"sys.collection","key":"collection:std.vote","seq":1,"deleted":true,"retain":true`), nil)
	wantReason(t, err, CodeDefDeleted, "deleted")
	_, err = ParseDefinitionVersion(ver(t, `"collection":"app.collection","key":"collection:std.vote","body":`+stdVote), body)
	wantReason(t, err, CodeDefCollection, "collection")
	_, err = ParseDefinitionVersion(good, parse(t, `{"name":"std.vote"}`))
	wantReason(t, err, CodeDefSchema, "$.schema")
}

func TestTopicsParsed(t *testing.T) {
	d := def(t, "app.chat", `"topics":["mentions","link:channel","a.b.c.d"]`)
	if len(d.Topics) != 3 || d.Topics[0].String() != "mentions" || !d.Topics[1].IsLink() || d.Topics[1].Rel != "channel" ||
		d.Topics[1].String() != "link:channel" || len(d.Topics[2].Path) != 4 || d.Topics[2].String() != "a.b.c.d" {
		t.Fatalf("%+v", d.Topics)
	}
}

func TestReasonsAreCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name":"a.b","version":1,"schema":{"properties":{`)
	for i := 0; i < 500; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"p` + itoa(i) + `":{"pattern":"x"}`)
	}
	b.WriteString(`}}}`)
	_, err := ParseDefinition(parse(t, b.String()))
	inv := err.(*Invalid)
	if len(inv.Reasons) != MaxReasons+1 || inv.Reasons[MaxReasons].Code != CodeDefMore ||
		!strings.Contains(inv.Reasons[MaxReasons].Message, "436 more") {
		t.Fatalf("%d reasons, last %v", len(inv.Reasons), inv.Reasons[len(inv.Reasons)-1])
	}
}

func itoa(i int) string {
	b, _ := canonical.Marshal(float64(i))
	return string(b)
}
