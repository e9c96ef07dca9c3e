package node_test

import (
	"context"
	"errors"
	"testing"

	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

func put(t *testing.T, tn *testNode, sp, coll string, body any, o *node.PutOptions) *record.Version {
	t.Helper()
	v, err := tn.Put(context.Background(), sp, coll, body, o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantCode(t *testing.T, err error, code string) *node.WriteError {
	t.Helper()
	var we *node.WriteError
	if !errors.As(err, &we) || we.Code != code {
		t.Fatalf("got %v, want a WriteError %s", err, code)
	}
	return we
}

// define defines the collection name in sp: version 1, an object schema,
// and the members extra names in pairs.
func define(t *testing.T, tn *testNode, sp, name string, extra ...any) {
	t.Helper()
	d := obj("name", name, "version", float64(1), "schema", obj("type", "object"))
	for i := 0; i+1 < len(extra); i += 2 {
		d.Set(extra[i].(string), extra[i+1])
	}
	if _, err := tn.Define(context.Background(), sp, d); err != nil {
		t.Fatal(err)
	}
}

// 02 §4.2: the next version after the current one, a delete included.
func TestWriteNextVersionAfterADelete(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("next", nil)
	a := put(t, tn, g.ID, "app.todo.item", obj("text", "milk"), nil)
	if a.Seq != 0 || a.Prev != "" || a.Genesis != "" {
		t.Fatalf("first version: seq %d prev %q genesis %q", a.Seq, a.Prev, a.Genesis)
	}
	b := put(t, tn, g.ID, "app.todo.item", obj("text", "oat milk"), &node.PutOptions{Key: a.Key})
	if b.Seq != 1 || b.Prev != a.ID || b.Genesis != a.ID {
		t.Fatalf("second version: seq %d prev %s genesis %s, want 1, %s, %s", b.Seq, b.Prev, b.Genesis, a.ID, a.ID)
	}
	d, err := tn.Delete(context.Background(), g.ID, a.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Deleted || d.HasBody || d.Seq != 2 || d.Prev != b.ID || d.Genesis != a.ID || d.HasLinks || d.HasTags {
		t.Fatalf("the delete: %+v", d)
	}
	c := put(t, tn, g.ID, "app.todo.item", obj("text", "again"), &node.PutOptions{Key: a.Key})
	if c.Seq != 3 || c.Prev != d.ID || c.Genesis != a.ID {
		t.Fatalf("re-creating a deleted key gave seq %d prev %s genesis %s, want 3 after the delete (02 §4.2)", c.Seq, c.Prev, c.Genesis)
	}
	if _, err := tn.Delete(context.Background(), g.ID, record.OwnerPart(tn.Account())+".nothing"); err == nil {
		t.Fatal("deleting a record not held succeeded")
	} else {
		wantCode(t, err, node.CodeNotFound)
	}
	cur, err := tn.Store().Current(context.Background(), g.ID, a.Key)
	if err != nil || cur.ID != c.ID {
		t.Fatalf("the record reads %v (%v), want %s", cur, err, c.ID)
	}
}

// 02 §4.1: a fresh owned key by default, a chosen name, a given key.
func TestWriteKeys(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("keys", nil)
	owner := record.OwnerPart(tn.Account())
	v := put(t, tn, g.ID, "app.note", obj("a", 1.0), nil)
	if record.KindOf(v.Key) != record.KindOwned || record.Owner(v.Key) != owner {
		t.Fatalf("a fresh key %s is not the account's owned key", v.Key)
	}
	if put(t, tn, g.ID, "app.note", obj("a", 2.0), nil).Key == v.Key {
		t.Fatal("two fresh keys are the same")
	}
	s := put(t, tn, g.ID, "app.settings", obj("theme", "dark"), &node.PutOptions{Key: "settings"})
	if s.Key != owner+".settings" {
		t.Fatalf("the chosen name settings gave %s", s.Key)
	}
	_, err := tn.Put(context.Background(), g.ID, "app.note", obj(), &node.PutOptions{Key: "Not A Key"})
	wantCode(t, err, node.CodeBadKey)
}

// 02 §4.1: a writer refuses a key whose chain is in another collection.
func TestWriteRefusesAKeyInAnotherCollection(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("colls", nil)
	put(t, tn, g.ID, "app.notes", obj("x", 1.0), &node.PutOptions{Key: "settings"})
	_, err := tn.Put(context.Background(), g.ID, "app.todo", obj("x", 2.0), &node.PutOptions{Key: "settings"})
	wantCode(t, err, node.CodeOtherColl)
}

// 02 §4.5: retain exactly where a writer must set it.
func TestWriteRetain(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("retain", nil)
	define(t, tn, g.ID, "app.log", "history", "all")
	define(t, tn, g.ID, "app.vote", "rules", obj("onePer", []any{"@author", "link:about"}), "links", obj("about", obj("to", "*")))
	define(t, tn, g.ID, "app.poll", "rules", obj("fixed", []any{"options"}))
	l0 := put(t, tn, g.ID, "app.log", obj("n", 0.0), nil)
	l1 := put(t, tn, g.ID, "app.log", obj("n", 1.0), &node.PutOptions{Key: l0.Key})
	p0 := put(t, tn, g.ID, "app.poll", obj("options", []any{"a", "b"}), nil)
	p1 := put(t, tn, g.ID, "app.poll", obj("options", []any{"a", "b"}, "title", "t"), &node.PutOptions{Key: p0.Key})
	about := []record.Link{{Rel: "about", To: p0.Key}}
	v0 := put(t, tn, g.ID, "app.vote", obj("choice", 0.0), &node.PutOptions{Links: about})
	v1 := put(t, tn, g.ID, "app.vote", obj("choice", 1.0), &node.PutOptions{Links: about})
	n0 := put(t, tn, g.ID, "app.free", obj("x", 0.0), nil)
	for _, c := range []struct {
		v    *record.Version
		want bool
		why  string
	}{
		{l0, true, "history all, seq 0"}, {l1, true, "history all, seq 1"},
		{p0, true, "fixed, seq 0"}, {p1, false, "fixed, seq 1"},
		{v0, true, "onePer, seq 0"}, {v1, false, "onePer, seq 1"},
		{n0, false, "no definition"},
	} {
		if c.v.Retain != c.want {
			t.Errorf("%s: retain %v, want %v (02 §4.5)", c.why, c.v.Retain, c.want)
		}
	}
	if v1.Key != v0.Key || v1.Seq != 1 {
		t.Fatalf("a second vote on the same poll is %s seq %d, want the next version of %s (02 §7.3)", v1.Key, v1.Seq, v0.Key)
	}
	want, err := collection.OnePerKey(collection.PublicOneKey(g.ID), "app.vote", []collection.Part{{Kind: collection.PartAuthor}, {Kind: collection.PartLink, Name: "about"}},
		tn.Account(), collection.Content{Links: about})
	if err != nil || v0.Key != want {
		t.Fatalf("the vote's key %s, want %s", v0.Key, want)
	}
	var access int
	for v, err := range tn.Store().Export(context.Background(), g.ID) {
		if err != nil {
			t.Fatal(err)
		}
		if space.IsAccessCollection(v.Collection) {
			access++
			if !v.Retain {
				t.Errorf("the access change %s in %s carries no retain", v.ID, v.Collection)
			}
		}
	}
	if access != 3 {
		t.Fatalf("%d access changes, want the 3 definitions", access)
	}
}

// 02 §4.10's example: a in app.chat, b in app.photos, d in app.chat.
func TestWriteLogPlaces(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("logs", nil)
	a := put(t, tn, g.ID, "app.chat", obj("t", "a"), nil)
	b := put(t, tn, g.ID, "app.photos", obj("t", "b"), nil)
	d := put(t, tn, g.ID, "app.chat", obj("t", "d"), nil)
	if *a.Log != (record.Log{N: 0}) || *b.Log != (record.Log{N: 0}) || *d.Log != (record.Log{N: 1, Prev: a.ID}) {
		t.Fatalf("logs %+v %+v %+v, want {0} {0} {1 %s} (02 §4.10)", *a.Log, *b.Log, *d.Log, a.ID)
	}
	// The places outlive the process: the next write after a restart
	// follows d.
	tn.reopen(nil)
	e := put(t, tn, g.ID, "app.chat", obj("t", "e"), nil)
	if *e.Log != (record.Log{N: 2, Prev: d.ID}) {
		t.Fatalf("after a restart the log is %+v, want {2 %s}", *e.Log, d.ID)
	}
	// A second space has lines of its own.
	g2 := tn.space("logs2", nil)
	if f := put(t, tn, g2.ID, "app.chat", obj("t", "f"), nil); *f.Log != (record.Log{N: 0}) {
		t.Fatalf("the first version in another space is at %+v", *f.Log)
	}
}

// 02 §9.6: the writer checks schema, links and rules before signing, and
// says why not; a version refused gives its place back.
func TestWriteChecksBeforeSigning(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("checks", nil)
	define(t, tn, g.ID, "app.task", "schema", obj("type", "object", "properties", obj("title", obj("type", "string")), "required", []any{"title"}),
		"links", obj("list", obj("to", []any{"app.list"}, "cardinality", "one")))
	define(t, tn, g.ID, "app.once", "rules", obj("final", true))
	we := wantCode(t, errOf(tn.Put(context.Background(), g.ID, "app.task", obj("title", 3.0), nil)), node.CodeSchema)
	if len(we.Issues) == 0 || we.Issues[0].Path == "" {
		t.Fatalf("a schema refusal names no path: %+v", we)
	}
	note := put(t, tn, g.ID, "app.note", obj(), nil)
	wantCode(t, errOf(tn.Put(context.Background(), g.ID, "app.task", obj("title", "x"), &node.PutOptions{Links: []record.Link{{Rel: "list", To: note.Key}}})), node.CodeLinks)
	wantCode(t, errOf(tn.Put(context.Background(), g.ID, "app.task", obj("title", "x"), &node.PutOptions{Links: []record.Link{{Rel: "other", To: note.Key}}})), node.CodeLinks)
	o := put(t, tn, g.ID, "app.once", obj("x", 1.0), nil)
	wantCode(t, errOf(tn.Put(context.Background(), g.ID, "app.once", obj("x", 2.0), &node.PutOptions{Key: o.Key})), collection.CodeRuleFinal)
	// None of the refused writes took a place.
	task := put(t, tn, g.ID, "app.task", obj("title", "ok"), nil)
	if task.Log.N != 0 {
		t.Fatalf("the first task written is at place %d: refused writes took places", task.Log.N)
	}
	if o2 := put(t, tn, g.ID, "app.once", obj("y", 1.0), nil); o2.Log.N != 1 {
		t.Fatalf("the second app.once written is at place %d, want 1", o2.Log.N)
	}
	wantCode(t, errOf(tn.Put(context.Background(), "bnotaspaceheld", "app.task", obj(), nil)), node.CodeSpaceNotKept)
	// What a writer writes: a collection a definition can name, a body
	// that is an object (peers would take either; the node does not write
	// them).
	for _, c := range []struct {
		coll string
		body any
	}{{"Todo", obj()}, {"todo", obj()}, {"app.Todo", obj()}, {"app.task", 7.0}, {"app.task", "x"}, {"app.task", []any{1.0}}} {
		if we := wantCode(t, errOf(tn.Put(context.Background(), g.ID, c.coll, c.body, nil)), node.CodeBadInput); we.Message == "" {
			t.Errorf("%s %v: no message", c.coll, c.body)
		}
	}
}

// A member without a grant is refused by the judge before anything leaves.
func TestWriteRefusedByTheJudge(t *testing.T) {
	owner := newNode(t, nil)
	g := owner.space("grants", map[string][]space.Grant{"reader": {}})
	other := newNode(t, nil)
	if err := other.JoinGenesis(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	wantCode(t, errOf(other.Put(context.Background(), g.ID, "app.note", obj(), nil)), space.CodeStandingMember)
	inv, err := owner.Invite(context.Background(), g.ID, []string{"reader"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.JoinInvite(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	wantCode(t, errOf(other.Put(context.Background(), g.ID, "app.note", obj(), nil)), space.CodeStandingGrant)
	ms, err := other.Members(context.Background(), g.ID)
	if err != nil || len(ms) != 2 {
		t.Fatalf("members after the join: %+v %v", ms, err)
	}
}

func errOf(_ *record.Version, err error) error { return err }
