package collection

import (
	"testing"

	"github.com/minca-go/minca/record"
)

// targets is a Targets over a map of key → collection.
type targets map[string]string

func (m targets) Target(key string) (string, bool) { c, ok := m[key]; return c, ok }

// 02 §5.2: when a record's links conform.
func TestLinkIssues(t *testing.T) {
	d := mustDef(t, `{"name":"std.vote","schema":{},"version":1,"links":{"about":{"to":["std.poll"],"cardinality":"one"},"replyTo":{"to":"*"},"cites":{"to":["app.a","app.b"]}}}`)
	in := Defined(d)
	held := targets{"p.poll": "std.poll", "n.note": "app.note", "a.a": "app.a", "b.b": "app.b"}
	links := func(ls ...string) []record.Link {
		var out []record.Link
		for i := 0; i < len(ls); i += 2 {
			out = append(out, record.Link{Rel: ls[i], To: ls[i+1]})
		}
		return out
	}
	// Conform: declared roles, one "one", targets in place, unheld targets,
	// "*" anywhere, several "many".
	for _, ls := range [][]record.Link{
		nil,
		links("about", "p.poll"),
		links("about", "x.unheld"),
		links("replyTo", "n.note", "replyTo", "p.poll"),
		links("cites", "a.a", "cites", "b.b", "cites", "x.unheld"),
	} {
		if got := LinkIssues(ls, in, held); got != nil {
			t.Fatalf("%v: %v", ls, got)
		}
	}
	wantIssues(t, LinkIssues(links("about", "p.poll", "likes", "n.note"), in, held), "link/undeclared $.links[1].rel")
	wantIssues(t, LinkIssues(links("about", "p.poll", "replyTo", "a.a", "about", "p.poll", "about", "x.y"), in, held), "link/cardinality $.links[2]")
	wantIssues(t, LinkIssues(links("about", "n.note"), in, held), "link/target $.links[0].to")
	wantIssues(t, LinkIssues(links("cites", "p.poll", "cites", "a.a"), in, held), "link/target $.links[0].to")
	// No target lookup: nothing is held.
	if got := LinkIssues(links("about", "n.note"), in, nil); got != nil {
		t.Fatal(got)
	}
	// A defined collection without links declares none.
	wantIssues(t, LinkIssues(links("about", "p.poll"), Defined(def(t, "app.x", "")), held), "link/undeclared $.links[0].rel")
	// An undefined collection, or one that can't be read: nothing to check.
	if LinkIssues(links("anything", "p.poll"), InForce{}, held) != nil || LinkIssues(links("anything", "p.poll"), Unreadable(), held) != nil {
		t.Fatal("issues without a definition")
	}
}
