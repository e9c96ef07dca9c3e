package identity

import (
	"errors"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

func parseJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := canonical.Parse([]byte(s))
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

// args is an invocation's arguments as 02 §9.3 builds them, with a body.
const testArgs = `{"space":"bspace1","collection":"app.todo.item","byCreator":true,
	"body":{"text":"Buy milk","done":false,"n":3,"price":2.5,"tags":["home","urgent"],
	"people":[{"name":"Ada","age":36},{"name":"Bob","age":17}],
	"by":{"x":1,"y":2},"star*":"lit","pat":"5*","nothing":null,"email":"ada@example.com"}}`

// policyCases: each operator true, false and, where it can be, malformed.
var policyCases = []struct {
	name string
	pol  string
	want string // "true", "false" or "malformed"
}{
	// ==
	{"eq string", `[["==", ".space", "bspace1"]]`, "true"},
	{"eq other", `[["==", ".space", "bspace2"]]`, "false"},
	{"eq deep object", `[["==", ".body.by", {"y":2,"x":1.0}]]`, "true"},
	{"eq deep list order", `[["==", ".body.tags", ["urgent","home"]]]`, "false"},
	{"eq type differs", `[["==", ".body.n", "3"]]`, "false"},
	{"eq null member", `[["==", ".body.nothing", null]]`, "true"},
	{"eq missing member", `[["==", ".body.missing", null]]`, "false"},
	{"eq optional missing is null", `[["==", ".body.missing?", null]]`, "true"},
	{"eq arity", `[["==", ".space"]]`, "malformed"},
	{"eq selector not string", `[["==", 1, 1]]`, "malformed"},
	// !=
	{"ne true", `[["!=", ".collection", "app.other"]]`, "true"},
	{"ne false", `[["!=", ".collection", "app.todo.item"]]`, "false"},
	{"ne missing does not hold", `[["!=", ".body.missing", 1]]`, "false"},
	{"ne arity", `[["!=", ".a", 1, 2]]`, "malformed"},
	// < <= > >=
	{"lt true", `[["<", ".body.n", 4]]`, "true"},
	{"lt false", `[["<", ".body.n", 3]]`, "false"},
	{"le true", `[["<=", ".body.n", 3]]`, "true"},
	{"le false", `[["<=", ".body.price", 2.4]]`, "false"},
	{"gt true", `[[">", ".body.price", 2]]`, "true"},
	{"gt false", `[[">", ".body.n", 3.0]]`, "false"},
	{"ge true", `[[">=", ".body.n", 3.0]]`, "true"},
	{"ge false", `[[">=", ".body.n", 3.5]]`, "false"},
	{"lt non-number selected", `[["<", ".body.text", 4]]`, "false"},
	{"lt non-number argument", `[["<", ".body.n", "4"]]`, "malformed"},
	{"ge null argument", `[[">=", ".body.n", null]]`, "malformed"},
	// like
	{"like suffix", `[["like", ".body.email", "*@example.com"]]`, "true"},
	{"like no match", `[["like", ".body.email", "*@example.org"]]`, "false"},
	{"like exact", `[["like", ".collection", "app.todo.item"]]`, "true"},
	{"like middle", `[["like", ".collection", "app.*.item"]]`, "true"},
	{"like escaped star", `[["like", ".body.pat", "5\\*"], ["like", ".body[\"star*\"]", "l*"]]`, "true"},
	{"like escaped star is literal", `[["like", ".body.text", "Buy\\*"]]`, "false"},
	{"like non-string", `[["like", ".body.n", "*"]]`, "false"},
	{"like pattern not string", `[["like", ".body.text", 1]]`, "malformed"},
	{"like bad escape", `[["like", ".body.text", "\\d"]]`, "malformed"},
	{"like trailing backslash", `[["like", ".body.text", "Buy\\"]]`, "malformed"},
	// not
	{"not true", `[["not", ["==", ".space", "bspace2"]]]`, "true"},
	{"not false", `[["not", ["==", ".space", "bspace1"]]]`, "false"},
	{"not unresolved stays unresolved", `[["not", ["==", ".body.missing", 1]]]`, "false"},
	{"not of a path through a missing member", `[["not", ["==", ".body.nope.deeper", true]]]`, "false"},
	{"not arity", `[["not", ["==", ".a", 1], ["==", ".b", 1]]]`, "malformed"},
	{"not of non-statement", `[["not", true]]`, "malformed"},
	// and
	{"and empty", `[["and", []]]`, "true"},
	{"and true", `[["and", [["==", ".space", "bspace1"], [">", ".body.n", 1]]]]`, "true"},
	{"and false", `[["and", [["==", ".space", "bspace1"], [">", ".body.n", 5]]]]`, "false"},
	{"and false beats unresolved", `[["not", ["and", [["==", ".body.missing", 1], ["==", ".space", "x"]]]]]`, "true"},
	{"and not a list", `[["and", ["==", ".space", "bspace1"]]]`, "malformed"},
	// or
	{"or empty is true (UCAN 1.0)", `[["or", []]]`, "true"},
	{"or true", `[["or", [["==", ".space", "x"], ["==", ".space", "bspace1"]]]]`, "true"},
	{"or false", `[["or", [["==", ".space", "x"], ["==", ".space", "y"]]]]`, "false"},
	{"or true beats unresolved", `[["or", [["==", ".body.missing", 1], ["==", ".space", "bspace1"]]]]`, "true"},
	{"or unresolved", `[["or", [["==", ".body.missing", 1], ["==", ".space", "x"]]]]`, "false"},
	{"or arity", `[["or"]]`, "malformed"},
	// all
	{"all true", `[["all", ".body.people", [">", ".age", 10]]]`, "true"},
	{"all false", `[["all", ".body.people", [">", ".age", 18]]]`, "false"},
	{"all over object values", `[["all", ".body.by", [">=", ".", 1]]]`, "true"},
	{"all empty", `[["all", ".body.people[5:]", ["==", ".", 1]]]`, "true"},
	{"all non-collection", `[["all", ".body.text", ["==", ".", 1]]]`, "false"},
	{"all element unresolved", `[["all", ".body.people", ["==", ".nick", "x"]]]`, "false"},
	{"all statement not a list", `[["all", ".body.people", 1]]`, "malformed"},
	// any
	{"any true", `[["any", ".body.tags", ["==", ".", "urgent"]]]`, "true"},
	{"any false", `[["any", ".body.tags", ["==", ".", "work"]]]`, "false"},
	{"any empty", `[["any", ".body.people[:0]", ["==", ".", 1]]]`, "false"},
	{"any nested", `[["any", ".body.people", ["and", [["like", ".name", "A*"], [">", ".age", 30]]]]]`, "true"},
	{"any bad selector", `[["any", "body", ["==", ".", 1]]]`, "malformed"},
	// the whole list
	{"every statement must hold", `[["==", ".space", "bspace1"], ["==", ".collection", "app.x"]]`, "false"},
	{"empty policy", `[]`, "true"},
	{"not a list", `{"==":1}`, "malformed"},
	{"unknown operator", `[["in", ".space", ["bspace1"]]]`, "malformed"},
	{"empty statement", `[[]]`, "malformed"},
	{"operator not a string", `[[1, ".space", 1]]`, "malformed"},
	{"selector does not parse", `[["==", ".body..text", "x"]]`, "malformed"},
}

func TestPolicyOperators(t *testing.T) {
	args := parseJSON(t, testArgs)
	for _, c := range policyCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePolicy(parseJSON(t, c.pol))
			if c.want == "malformed" {
				var ne *NoteError
				if !errors.As(err, &ne) || ne.Code != CodeNotePolicy {
					t.Fatalf("%s: want a note/policy error, got %v", c.pol, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", c.pol, err)
			}
			if got := p.Holds(args); got != (c.want == "true") {
				t.Fatalf("%s holds = %v, want %s", c.pol, got, c.want)
			}
		})
	}
}

// The examples of UCAN Delegation §Glob Matching, for "Alice\*, Bob*, Carol.".
func TestLikeUCANExamples(t *testing.T) {
	parts, err := parseGlob(`Alice\*, Bob*, Carol.`)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Alice*, Bob, Carol.", "Alice*, Bob, Dan, Erin, Carol.", "Alice*, Bob  , Carol.", "Alice*, Bob*, Carol."} {
		if !globMatch(parts, s) {
			t.Errorf("%q should match", s)
		}
	}
	for _, s := range []string{"Alice*, Bob, Carol", "Alice*, Bob*, Carol!", "Alice, Bob, Carol.", "Alice Cooper, Bob, Carol.", " Alice*, Bob, Carol. "} {
		if globMatch(parts, s) {
			t.Errorf("%q should not match", s)
		}
	}
	more := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"**", "x", true}, {"a*a", "a", false}, {"a*a", "aa", true},
		{"*b*b*", "abcb", true}, {"*b*b*", "abc", false}, {`\\*`, `\x`, true}, {`\\*`, `x`, false},
		{"é*", "été", true}, {"", "", true}, {"", "a", false},
	}
	for _, m := range more {
		parts, err := parseGlob(m.pat)
		if err != nil {
			t.Fatalf("%q: %v", m.pat, err)
		}
		if got := globMatch(parts, m.s); got != m.want {
			t.Errorf("like %q on %q = %v", m.pat, m.s, got)
		}
	}
}

// The quantifier examples of UCAN Delegation §Quantification.
func TestQuantifierUCANExamples(t *testing.T) {
	args := parseJSON(t, `{"a": [{"b": 1}, {"b": 2}, {"z": [7, 8, 9]}]}`)
	holds := func(pol string) bool {
		p, err := ParsePolicy(parseJSON(t, pol))
		if err != nil {
			t.Fatal(err)
		}
		return p.Holds(args)
	}
	if holds(`[["all", ".a", [">", ".b", 0]]]`) {
		t.Error("all .a > .b 0 holds, though one element has no b")
	}
	if !holds(`[["any", ".a", ["==", ".b", 2]]]`) {
		t.Error("any .a == .b 2 does not hold")
	}
}

// byCreator unknown (a version judged alone): no policy reading it holds,
// however it is negated.
func TestUnknownByCreatorHoldsNothing(t *testing.T) {
	inv := &Invocation{Cmd: CmdRecordWrite, Space: "s", Collection: "c"}
	for _, pol := range []string{
		`[["==", ".byCreator", true]]`, `[["==", ".byCreator", false]]`,
		`[["!=", ".byCreator", true]]`, `[["not", ["==", ".byCreator", true]]]`,
		`[["or", [["==", ".byCreator", true], ["==", ".byCreator", false]]]]`,
	} {
		p, err := ParsePolicy(parseJSON(t, pol))
		if err != nil {
			t.Fatal(err)
		}
		if p.Holds(inv.Args()) {
			t.Errorf("%s holds with byCreator unknown", pol)
		}
	}
	yes := true
	inv.ByCreator = &yes
	p, _ := ParsePolicy(parseJSON(t, `[["==", ".byCreator", true]]`))
	if !p.Holds(inv.Args()) {
		t.Error("byCreator true does not hold when known")
	}
}

func TestPolicyDepthBound(t *testing.T) {
	nest := func(depth int) string {
		return strings.Repeat(`["not", `, depth-1) + `["==", ".space", "x"]` + strings.Repeat(`]`, depth-1)
	}
	if _, err := ParsePolicy(parseJSON(t, "["+nest(MaxPolicyDepth)+"]")); err != nil {
		t.Fatalf("depth %d refused: %v", MaxPolicyDepth, err)
	}
	_, err := ParsePolicy(parseJSON(t, "["+nest(MaxPolicyDepth+1)+"]"))
	if err == nil || !strings.Contains(err.Error(), "deeper than 16") {
		t.Fatalf("depth %d: %v", MaxPolicyDepth+1, err)
	}
	// Through and/or lists and quantifiers too.
	deep := `["==", ".", 1]`
	for i := 0; i < MaxPolicyDepth; i++ {
		switch i % 3 {
		case 0:
			deep = `["and", [` + deep + `]]`
		case 1:
			deep = `["any", ".", ` + deep + `]`
		default:
			deep = `["or", [` + deep + `]]`
		}
	}
	if _, err := ParsePolicy(parseJSON(t, "["+deep+"]")); err == nil {
		t.Fatal("17 levels through and/any/or accepted")
	}
}
