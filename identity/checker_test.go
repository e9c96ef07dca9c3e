package identity

import (
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
)

func writeIn(space, collection string, body any) *Invocation {
	return &Invocation{Cmd: CmdRecordWrite, Space: space, Collection: collection, HasBody: true, Body: body}
}

func TestCheckerGate(t *testing.T) {
	root, session, stranger := newKey(t), newKey(t), newKey(t)
	c := &Checker{Resolver: &Resolver{}}
	check := func(n *Note, aud string, at *time.Time, inv *Invocation) error {
		t.Helper()
		iss, err := c.CheckNote(n.Object(), aud, at, inv)
		if err == nil && iss != n.Iss {
			t.Fatalf("root %s, want the issuer %s", iss, n.Iss)
		}
		return err
	}
	all := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdTop, Exp: 1000})
	// Records are judged with no time: an expired note still grants.
	if err := check(all, session.DID(), nil, writeIn("s1", "app.todo.item", nil)); err != nil {
		t.Fatal(err)
	}
	// Live checks pass a time.
	now := time.Unix(5000, 0)
	wantCode(t, check(all, session.DID(), &now, nil), CodeNoteTime)
	early := time.Unix(500, 0)
	if err := check(all, session.DID(), &early, nil); err != nil {
		t.Fatal(err)
	}
	// Audience mismatch: a note made out to another key.
	wantCode(t, check(all, stranger.DID(), nil, writeIn("s1", "c", nil)), CodeNoteAudience)
	// A note from someone else: the stranger issues a note about root's
	// account; it grants nothing.
	about := issue(t, stranger, NoteOptions{Aud: session.DID(), Sub: root.DID(), Cmd: CmdTop})
	wantCode(t, check(about, session.DID(), nil, writeIn("s1", "c", nil)), CodeNoteSubject)
	// A note for another space.
	one := issue(t, root, NoteOptions{Aud: session.DID(), Sub: SpaceSubject("s1"), Cmd: CmdTop})
	if err := check(one, session.DID(), nil, writeIn("s1", "c", nil)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, check(one, session.DID(), nil, writeIn("s2", "c", nil)), CodeNoteSubject)
	wantCode(t, check(one, session.DID(), nil, writeIn("", "c", nil)), CodeNoteSubject)
	// A records-only note: /record/write and /record/delete, nothing else.
	rec := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord})
	if err := check(rec, session.DID(), nil, writeIn("s1", "c", nil)); err != nil {
		t.Fatal(err)
	}
	if err := check(rec, session.DID(), nil, &Invocation{Cmd: CmdRecordDelete, Space: "s1", Collection: "c"}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{CmdCollectionDefine, CmdAccountWrite, "/"} {
		wantCode(t, check(rec, session.DID(), nil, &Invocation{Cmd: cmd, Space: "s1"}), CodeNoteCommand)
	}
	// Reading only.
	read := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecordRead})
	wantCode(t, check(read, session.DID(), nil, writeIn("s1", "c", nil)), CodeNoteCommand)
	// A policy on the collection.
	todo := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord, Pol: []any{[]any{"like", ".collection", "app.todo.*"}}})
	if err := check(todo, session.DID(), nil, writeIn("s1", "app.todo.item", nil)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, check(todo, session.DID(), nil, writeIn("s1", "app.chat.message", nil)), CodeNotePolicy)
	// Loose versions pass no invocation: validity and audience only.
	if err := check(one, session.DID(), &early, nil); err != nil {
		t.Fatal(err)
	}
	// Shape and signature refusals come through CheckNote too.
	wantCode(t, check(withSig(t, all, "…"), session.DID(), nil, nil), CodeNoteSignature)
	if _, err := c.CheckNote(nil, session.DID(), nil, nil); err == nil {
		t.Fatal("a nil note passed")
	}
}

func TestCheckerCache(t *testing.T) {
	root, session := newKey(t), newKey(t)
	c := &Checker{CacheSize: 4}
	n := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdTop})
	for i := 0; i < 3; i++ {
		if err := c.CheckValid(n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.cur)+len(c.prev) != 1 {
		t.Fatalf("remembered %d notes, want 1", len(c.cur)+len(c.prev))
	}
	// A remembered note's signature changed, or its payload: verified anew,
	// and refused.
	wantCode(t, c.CheckValid(withSig(t, n, n.Sig[:len(n.Sig)-2]+"AA"), nil), CodeNoteSignature)
	tampered := editNote(t, n, func(p *canonical.Object) { p.Set("cmd", "/record") })
	wantCode(t, c.CheckValid(tampered, nil), CodeNoteSignature)
	// Bounded.
	for i := 0; i < 20; i++ {
		if err := c.CheckValid(issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdTop}), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.cur) + len(c.prev); n > 4 {
		t.Fatalf("remembers %d notes, bound 4", n)
	}
	// None remembered when CacheSize is negative.
	off := &Checker{CacheSize: -1}
	if err := off.CheckValid(n, nil); err != nil || off.cur != nil {
		t.Fatalf("%v, %v", err, off.cur)
	}
}

// grantTerms is what 06 §2.5 step 5 says a home signs for the spaces
// granted under scope: spaces (and scope: account).
func grantTerms(account, scope string, spaces []string) (sub string, pol []any) {
	if scope == "account" {
		return account, []any{}
	}
	switch len(spaces) {
	case 0:
		return account, []any{[]any{"not", []any{"and", []any{}}}}
	case 1:
		return SpaceSubject(spaces[0]), []any{}
	}
	sorted := append([]string(nil), spaces...)
	sort.Strings(sorted)
	var alts []any
	for _, s := range sorted {
		alts = append(alts, []any{"==", ".space", s})
	}
	return account, []any{[]any{"or", alts}}
}

// 06 §2.5: each grantTerms policy grants what that section says.
func TestGrantTerms(t *testing.T) {
	root, app := newKey(t), newKey(t)
	c := &Checker{}
	note := func(scope string, spaces ...string) *Note {
		sub, pol := grantTerms(root.DID(), scope, spaces)
		return issue(t, root, NoteOptions{Aud: app.DID(), Sub: sub, Cmd: CmdTop, Pol: pol, Exp: 2000000000})
	}
	grants := func(n *Note, space string) bool {
		_, err := c.CheckNote(n.Object(), app.DID(), nil, writeIn(space, "app.todo.item", nil))
		return err == nil
	}
	account := note("account")
	several := note("spaces", "bzz", "baa", "bmm")
	one := note("spaces", "bone")
	none := note("spaces")
	if p := several.Pol[0].([]any)[1].([]any); p[0].([]any)[2] != "baa" || p[2].([]any)[2] != "bzz" {
		t.Fatalf("the ids are not sorted: %v", p)
	}
	for _, space := range []string{"baa", "bmm", "bzz", "bone", "bother"} {
		if !grants(account, space) {
			t.Errorf("scope account does not grant %s", space)
		}
		inSeveral := space == "baa" || space == "bmm" || space == "bzz"
		if grants(several, space) != inSeveral {
			t.Errorf("several spaces: grants %s = %v", space, !inSeveral)
		}
		if grants(one, space) != (space == "bone") {
			t.Errorf("one space: grants %s = %v", space, space != "bone")
		}
		if grants(none, space) {
			t.Errorf("no spaces: grants %s", space)
		}
	}
}

func TestSessionSigner(t *testing.T) {
	root, session, other := newKey(t), newKey(t), newKey(t)
	n := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord})
	s, err := NewSessionSigner(session, n)
	if err != nil {
		t.Fatal(err)
	}
	if s.DID() != session.DID() || s.Root() != root.DID() || s.Proof() != n.Object() || s.Note() != n {
		t.Fatal("session signer does not carry its key and note")
	}
	sig, err := s.Sign([]byte("x"))
	if err != nil || !session.Public().Verify([]byte("x"), sig) {
		t.Fatalf("signs with another key: %v", err)
	}
	if _, err := NewSessionSigner(other, n); err == nil {
		t.Fatal("a note made out to another key was taken")
	}
	if _, err := NewSessionSigner(session, withSig(t, n, "…")); err == nil {
		t.Fatal("a note that does not verify was taken")
	}
}

// One Checker shared by goroutines, as a node's verifiers share it.
func TestCheckerConcurrent(t *testing.T) {
	root, session := newKey(t), newKey(t)
	c := &Checker{Resolver: &Resolver{}, CacheSize: 8}
	notes := make([]*Note, 12)
	for i := range notes {
		notes[i] = issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord})
	}
	bad := withSig(t, notes[0], notes[1].Sig)
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 60; i++ {
				if _, err := c.CheckNote(notes[i%len(notes)].Object(), session.DID(), nil, writeIn("s", "c", nil)); err != nil {
					errs <- err
					return
				}
				if _, err := c.CheckNote(bad.Object(), session.DID(), nil, nil); err == nil {
					errs <- errors.New("a note with another note's signature passed")
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A note passed twice as the same object is kept, copied: the same note
// again — that object or another with its content — passes without its
// signed bytes hashed again, with its audience, time and grants still
// checked; the object changed in place after it was kept is checked anew.
func TestCheckerKeepsTheNoteItPassed(t *testing.T) {
	root, session, stranger := newKey(t), newKey(t), newKey(t)
	c := &Checker{}
	n := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord, Exp: 1000})
	obj := n.Object()
	for range 3 {
		if iss, err := c.CheckNote(obj, session.DID(), nil, nil); err != nil || iss != n.Iss {
			t.Fatalf("%s %v", iss, err)
		}
	}
	l := c.last.Load()
	if l == nil || l.obj == obj {
		t.Fatalf("kept %+v: want a copy of the note", l)
	}
	text, _ := canonical.Marshal(obj)
	again, _ := canonical.Parse(text)
	if _, err := c.CheckNote(again.(*canonical.Object), session.DID(), nil, nil); err != nil {
		t.Fatal(err)
	}
	wantCode(t, func() error { _, err := c.CheckNote(obj, stranger.DID(), nil, nil); return err }(), CodeNoteAudience)
	late := time.Unix(5000, 0)
	wantCode(t, func() error { _, err := c.CheckNote(obj, session.DID(), &late, nil); return err }(), CodeNoteTime)
	if _, err := c.CheckNote(obj, session.DID(), nil, &Invocation{Cmd: CmdTop}); err == nil {
		t.Fatal("a /record note granted /")
	}
	// Changed in place: the payload's cmd, then the signature.
	p, _ := obj.Get("payload")
	p.(*canonical.Object).Set("cmd", CmdTop)
	wantCode(t, func() error { _, err := c.CheckNote(obj, session.DID(), nil, nil); return err }(), CodeNoteSignature)
	p.(*canonical.Object).Set("cmd", CmdRecord)
	sig, _ := obj.Get("sig")
	obj.Set("sig", sig.(string)[:len(sig.(string))-2]+"AA")
	wantCode(t, func() error { _, err := c.CheckNote(obj, session.DID(), nil, nil); return err }(), CodeNoteSignature)
}
