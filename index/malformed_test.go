package index_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/index"
)

func nested(n int) string {
	return `{"collection":"a.b","where":` + strings.Repeat(`{"$not":`, n-1) + `{"a":1}` + strings.Repeat(`}`, n-1) + `}`
}

func notPath(n int) string { return "where" + strings.Repeat(".$not", n) }

func inList(n int) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprint(i)
	}
	return `{"collection":"a.b","where":{"n":{"$in":[` + strings.Join(vs, ",") + `]}}}`
}

func manyConds(n int) string {
	cs := make([]string, n)
	for i := range cs {
		cs[i] = fmt.Sprintf(`{"f%d":1}`, i)
	}
	return `{"collection":"a.b","where":{"$or":[{"$and":[` + strings.Join(cs[:n/2], ",") + `]},{"$and":[` + strings.Join(cs[n/2:], ",") + `]}]}}`
}

// Every malformed query is refused with a stable code and the path of the
// bad member.
func TestMalformedQueries(t *testing.T) {
	for _, c := range []struct{ q, code, path string }{
		{`[]`, index.CodeJSON, ""},
		{`{"collection":`, index.CodeJSON, ""},
		{`{"collection":"a.b","collection":"a.b"}`, index.CodeJSON, ""},
		{`{"where":{}}`, index.CodeMissing, "collection"},
		{`{"collection":1}`, index.CodeType, "collection"},
		{`{"collection":""}`, index.CodeCollection, "collection"},
		{`{"collection":"` + strings.Repeat("a", 257) + `"}`, index.CodeCollection, "collection"},
		{`{"collection":"a.b","x":1}`, index.CodeUnknown, "x"},
		{`{"collection":"a.b","x y":1}`, index.CodeUnknown, `["x y"]`},
		{`{"collection":"a.b","where":[]}`, index.CodeType, "where"},
		{`{"collection":"a.b","where":{"$foo":1}}`, index.CodeOperator, "where.$foo"},
		{`{"collection":"a.b","where":{"a..b":1}}`, index.CodePath, `where["a..b"]`},
		{`{"collection":"a.b","where":{"1a":1}}`, index.CodePath, `where["1a"]`},
		{`{"collection":"a.b","where":{"a.b.c.d.e.f.g.h.i":1}}`, index.CodePath, `where["a.b.c.d.e.f.g.h.i"]`},
		{`{"collection":"a.b","where":{"@nope":1}}`, index.CodePath, "where.@nope"},
		{`{"collection":"a.b","where":{"link:Bad":"k"}}`, index.CodePath, `where["link:Bad"]`},
		{`{"collection":"a.b","where":{"n":{"$gt":1,"x":2}}}`, index.CodeMixed, "where.n"},
		{`{"collection":"a.b","where":{"n":{"$gtx":1}}}`, index.CodeOperator, "where.n.$gtx"},
		{`{"collection":"a.b","where":{"n":{"$gt":true}}}`, index.CodeOperand, "where.n.$gt"},
		{`{"collection":"a.b","where":{"n":{"$lte":[1]}}}`, index.CodeOperand, "where.n.$lte"},
		{`{"collection":"a.b","where":{"n":{"$in":1}}}`, index.CodeOperand, "where.n.$in"},
		{`{"collection":"a.b","where":{"n":{"$nin":{"a":1}}}}`, index.CodeOperand, "where.n.$nin"},
		{`{"collection":"a.b","where":{"n":{"$exists":1}}}`, index.CodeOperand, "where.n.$exists"},
		{`{"collection":"a.b","where":{"$and":[]}}`, index.CodeEmpty, "where.$and"},
		{`{"collection":"a.b","where":{"$and":[{"a":1},{"b":{"$lt":null}}]}}`, index.CodeOperand, "where.$and[1].b.$lt"},
		{`{"collection":"a.b","where":{"$or":[{"a":1},3]}}`, index.CodeType, "where.$or[1]"},
		{`{"collection":"a.b","where":{"$or":{}}}`, index.CodeType, "where.$or"},
		{`{"collection":"a.b","where":{"$not":[]}}`, index.CodeType, "where.$not"},
		{`{"collection":"a.b","where":{"link:about":{"$gt":"k"}}}`, index.CodeOperator, `where["link:about"].$gt`},
		{`{"collection":"a.b","where":{"@tags":{"$lt":"k"}}}`, index.CodeOperator, `where.@tags.$lt`},
		{`{"collection":"a.b","where":{"link:about":{"$in":["k",2]}}}`, index.CodeOperand, `where["link:about"].$in[1]`},
		{`{"collection":"a.b","where":{"@createdAt":{"$contains":"x"}}}`, index.CodeOperator, "where.@createdAt.$contains"},
		{`{"collection":"a.b","where":{"@createdAt":"yesterday"}}`, index.CodeOperand, "where.@createdAt"},
		{`{"collection":"a.b","where":{"@createdAt":{"$in":["$me"]}}}`, index.CodeOperand, "where.@createdAt.$in[0]"},
		{`{"collection":"a.b","where":{"@createdAt":1.5}}`, index.CodeOperand, "where.@createdAt"},
		{`{"collection":"a.b","where":{"@key":5}}`, index.CodeOperand, "where.@key"},
		{`{"collection":"a.b","where":{"@createdBy":{"$contains":null}}}`, index.CodeOperand, "where.@createdBy.$contains"},
		{nested(17), index.CodeDepth, notPath(16)},
		{`{"collection":"a.b","where":{"$and":[{"$or":[{"$not":` + strings.Repeat(`{"$not":`, 13) + `{"a":1}` + strings.Repeat(`}`, 14) + `]}]}}`, index.CodeDepth, "where.$and[0].$or[0]" + strings.Repeat(".$not", 14)},
		{inList(257), index.CodeBounds, "where.n.$in"},
		{manyConds(258), index.CodeBounds, "where.$or[1].$and[127].f256"},
		{`{"collection":"a.b","limit":0}`, index.CodeBounds, "limit"},
		{`{"collection":"a.b","limit":1.5}`, index.CodeBounds, "limit"},
		{`{"collection":"a.b","limit":1001}`, index.CodeBounds, "limit"},
		{`{"collection":"a.b","limit":"5"}`, index.CodeType, "limit"},
		{`{"collection":"a.b","order":"n"}`, index.CodeType, "order"},
		{`{"collection":"a.b","order":{"by":"@createdBy"}}`, index.CodeOrder, "order.by"},
		{`{"collection":"a.b","order":{"by":"link:about"}}`, index.CodeOrder, "order.by"},
		{`{"collection":"a.b","order":{"by":"a..b"}}`, index.CodePath, "order.by"},
		{`{"collection":"a.b","order":{"by":"n","dir":"up"}}`, index.CodeOrder, "order.dir"},
		{`{"collection":"a.b","order":{"dir":"asc"}}`, index.CodeMissing, "order.by"},
		{`{"collection":"a.b","order":{"by":"n","x":1}}`, index.CodeUnknown, "order.x"},
		{`{"collection":"a.b","cursor":"!!"}`, index.CodeCursor, "cursor"},
		{`{"collection":"a.b","cursor":"AQ"}`, index.CodeCursor, "cursor"},
		{`{"collection":"a.b","cursor":5}`, index.CodeType, "cursor"},
		{`{"collection":"a.b","where":{"x":"` + strings.Repeat("y", index.MaxQueryBytes) + `"}}`, index.CodeTooLarge, ""},
	} {
		_, err := index.Parse([]byte(c.q))
		var e *index.Error
		if !errors.As(err, &e) {
			t.Fatalf("%.120s: %v, not an *index.Error", c.q, err)
		}
		if e.Code != c.code || e.Path != c.path {
			t.Errorf("%.120s: refused %s at %q (%s), want %s at %q", c.q, e.Code, e.Path, e.Message, c.code, c.path)
		}
		if !errors.Is(err, index.ErrMalformed) || !slices.Contains(index.Codes(), e.Code) {
			t.Errorf("%s: not ErrMalformed, or a code Codes does not list", e.Code)
		}
	}
	// At the bounds, accepted.
	for _, q := range []string{nested(16), inList(256), manyConds(256), `{"collection":"a.b","limit":1000}`,
		`{"collection":"a.b","where":{"a.b.c.d.e.f.g.h":1}}`, `{"collection":"a.b","where":{"o":{}}}`} {
		if _, err := index.Parse([]byte(q)); err != nil {
			t.Errorf("%.80s: %v", q, err)
		}
	}
}

// A proposal's query is 06 §2.11's { collection, where? } and nothing else.
func TestProposalQueries(t *testing.T) {
	for _, c := range []struct{ q, code, path string }{
		{`{"collection":"std.message","limit":5}`, index.CodeProposal, "limit"},
		{`{"collection":"std.message","foo":5}`, index.CodeProposal, "foo"},
		{`{"collection":"sys.joined"}`, index.CodeNotProposal, "collection"},
		{`{"collection":"Std.Message"}`, index.CodeCollection, "collection"},
		{`{"collection":"message"}`, index.CodeCollection, "collection"},
		{`{"collection":"std.message","where":{"$or":[{"@tags":"x"}]}}`, index.CodeProposal, "where.$or[0].@tags"},
	} {
		v, err := canonical.Parse([]byte(c.q))
		if err != nil {
			t.Fatal(err)
		}
		_, err = index.ParseProposal(v)
		var e *index.Error
		if !errors.As(err, &e) || e.Code != c.code || e.Path != c.path {
			t.Errorf("%s: %v, want %s at %q", c.q, err, c.code, c.path)
		}
	}
	// 06 §2.11's example.
	v, _ := canonical.Parse([]byte(`{ "collection": "std.message" }`))
	if q, err := index.ParseProposal(v); err != nil || q.Collection != "std.message" {
		t.Fatalf("06 §2.11's example: %v", err)
	}
}

// "$me" with no account, a cursor of another query, paging in a live
// query, and no space are refused when the query is run.
func TestRefusedWhenRun(t *testing.T) {
	w := newWorld(t, 3, memory.Open(nil))
	for range 10 {
		w.op()
	}
	code := func(err error) string {
		var e *index.Error
		if !errors.As(err, &e) {
			t.Fatalf("%v is not an *index.Error", err)
		}
		return e.Code + " " + e.Path
	}
	q, _ := index.Parse([]byte(`{"collection":"app.item","where":{"@createdBy":{"$in":["$me"]}}}`))
	if _, err := w.ix.Find(ctx, w.space, q, ""); code(err) != index.CodeMe+" where" {
		t.Fatalf("$me without an account: %v", err)
	}
	if _, err := w.ix.Find(ctx, "", q, "did:key:z"); code(err) != index.CodeSpace+" " {
		t.Fatalf("no space: %v", err)
	}
	q1, _ := index.Parse([]byte(`{"collection":"app.item","limit":1}`))
	p, err := w.ix.Find(ctx, w.space, q1, "")
	if err != nil || p.Next == "" {
		t.Fatalf("first page: %v %+v", err, p)
	}
	for _, other := range []string{
		`{"collection":"app.other","limit":1,"cursor":"` + p.Next + `"}`,
		`{"collection":"app.item","limit":1,"order":{"by":"@createdAt","dir":"desc"},"cursor":"` + p.Next + `"}`,
		`{"collection":"app.item","limit":1,"where":{"n":1},"cursor":"` + p.Next + `"}`,
	} {
		q2, err := index.Parse([]byte(other))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.ix.Find(ctx, w.space, q2, ""); code(err) != index.CodeCursorQuery+" cursor" {
			t.Fatalf("%s: %v", other, err)
		}
	}
	// The same query with another limit takes the cursor.
	q3, _ := index.Parse([]byte(`{"collection":"app.item","limit":3,"cursor":"` + p.Next + `"}`))
	if _, err := w.ix.Find(ctx, w.space, q3, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ix.Watch(w.space, q1, ""); code(err) != index.CodeLive+" limit" {
		t.Fatalf("a live query with a limit: %v", err)
	}
}

// Options that make no sense are refused.
func TestOptionsChecked(t *testing.T) {
	for _, o := range []*index.Options{
		{Fields: map[string][]string{"app.item": {"a..b"}}},
		{Fields: map[string][]string{"app.item": {"link:about"}}},
		{Fields: map[string][]string{"": {"a"}}},
		{Fields: map[string][]string{"app.item": strings.Split("a b c d e f g h i j k l m n o p q", " ")}},
		{LiveBuffer: -1},
		{EventBuffer: -5},
	} {
		if _, err := index.New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := index.New(nil); err != nil {
		t.Fatal(err)
	}
}
