package record

import (
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// underNote is a signer that attaches any note, whoever it is made out to:
// what a careless or hostile writer could send.
type underNote struct {
	*identity.PrivateKey
	note *identity.Note
}

func (u underNote) Proof() *canonical.Object { return u.note.Object() }

func issueNote(t testing.TB, root identity.Signer, opts identity.NoteOptions) *identity.Note {
	t.Helper()
	n, err := identity.IssueNote(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// signIn signs a first version in space at a fresh key of account.
func signIn(t testing.TB, s identity.Signer, account, space, collection, body string) *Version {
	t.Helper()
	key, err := FreshKey(account)
	if err != nil {
		t.Fatal(err)
	}
	o := obj(t, `{"collection":"`+collection+`","createdAt":"2026-09-26T12:00:00.000Z","space":"`+space+`","seq":0,"log":{"n":0},"body":`+body+`}`)
	o.Set("key", key)
	v, err := Sign(o, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// gate runs every check a version alone allows, as a peer judging it in
// space does, and returns its root.
func gate(t testing.TB, v *Version, space string) (string, error) {
	t.Helper()
	if err := (&Verifier{}).Verify(v); err != nil {
		t.Fatalf("crypto gate: %v", err)
	}
	root, err := Root(v, InvocationOf(v, space, nil), &identity.Checker{})
	if err != nil {
		if _, ok := err.(*Refusal); !ok {
			t.Fatalf("refused with a %T, not a *Refusal: %v", err, err)
		}
		return "", err
	}
	return root, CheckFirstKey(v, root)
}

// A version signed under a records-only note (cmd /record, 06 §2.5), in and
// out of its reach (02 §9.3).
func TestRecordsOnlyNote(t *testing.T) {
	root, session := mustKey(t), mustKey(t)
	const other = "bother2tzeoqxvmzyq3mtbc4ysvmhvcebfhx5gaftjxvkaagkghja"
	note := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Sub: identity.SpaceSubject(testSpace), Cmd: identity.CmdRecord, Exp: 1})
	s, err := identity.NewSessionSigner(session, note)
	if err != nil {
		t.Fatal(err)
	}
	// In reach: a write in its space. Its root is the account, and the key
	// is the account's (02 §4.1), though the session key signed. The note
	// expired long before createdAt: records are judged with no time.
	v := signIn(t, s, root.DID(), testSpace, "app.todo.item", `{"text":"a"}`)
	if v.Proof == nil || v.Author != session.DID() {
		t.Fatalf("signed without the note: %+v", v)
	}
	if got, err := gate(t, v, testSpace); err != nil || got != root.DID() {
		t.Fatalf("root %s, %v", got, err)
	}
	// In reach: deleting it, TestDeleteUnderNote.
	// Out of reach: the same note, a version in another space.
	w := signIn(t, s, root.DID(), other, "app.todo.item", `{"text":"a"}`)
	_, err = gate(t, w, other)
	refusedWith(t, err, identity.CodeNoteSubject)
	if r := err.(*Refusal); r.Field != "proof.payload.sub" || r.Step() != "note" {
		t.Fatalf("refusal %+v", r)
	}
	// Judged in the space it claims is all a peer does: a copy judged for
	// another space than its own is §9.4's to refuse, and the note does not
	// reach there either.
	_, err = gate(t, v, other)
	refusedWith(t, err, identity.CodeNoteSubject)
	// A records-only note for the whole account, with a policy naming the
	// collection: in reach and out.
	todo := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdRecord,
		Pol: []any{[]any{"==", ".collection", "app.todo.item"}}})
	s2, _ := identity.NewSessionSigner(session, todo)
	if got, err := gate(t, signIn(t, s2, root.DID(), other, "app.todo.item", `{}`), other); err != nil || got != root.DID() {
		t.Fatalf("root %s, %v", got, err)
	}
	_, err = gate(t, signIn(t, s2, root.DID(), testSpace, "app.chat.message", `{}`), testSpace)
	refusedWith(t, err, identity.CodeNotePolicy)
	// A note that grants reading only does not let the key write.
	read := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdRecordRead})
	s3, _ := identity.NewSessionSigner(session, read)
	_, err = gate(t, signIn(t, s3, root.DID(), testSpace, "app.todo.item", `{}`), testSpace)
	refusedWith(t, err, identity.CodeNoteCommand)
}

func TestDeleteUnderNote(t *testing.T) {
	root, session := mustKey(t), mustKey(t)
	rec := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdRecord})
	s, _ := identity.NewSessionSigner(session, rec)
	v := signIn(t, s, root.DID(), testSpace, "app.todo.item", `{"text":"a"}`)
	o := obj(t, `{"collection":"app.todo.item","createdAt":"2026-09-26T12:01:00.000Z","space":"`+testSpace+`","deleted":true,"body":null}`)
	NextAfter(v).Apply(o)
	o.Set("log", logValue(1, v.ID))
	del, err := Sign(o, s)
	if err != nil {
		t.Fatal(err)
	}
	if inv := InvocationOf(del, testSpace, nil); inv.Cmd != CmdDelete {
		t.Fatalf("a delete invokes %s", inv.Cmd)
	}
	if got, err := gate(t, del, testSpace); err != nil || got != root.DID() {
		t.Fatalf("root %s, %v", got, err)
	}
	// A note granting /record/write only does not reach a delete.
	w := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdRecordWrite})
	sw, _ := identity.NewSessionSigner(session, w)
	del2, err := Sign(o, sw)
	if err != nil {
		t.Fatal(err)
	}
	_, err = gate(t, del2, testSpace)
	refusedWith(t, err, identity.CodeNoteCommand)
}

func TestNoteRefusalsBecomeRefusals(t *testing.T) {
	root, session, stranger := mustKey(t), mustKey(t), mustKey(t)
	all := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdTop})
	// Audience mismatch: the stranger signs, attaching a note made out to
	// the session key.
	v := signIn(t, underNote{stranger, all}, root.DID(), testSpace, "app.todo.item", `{}`)
	_, err := gate(t, v, testSpace)
	refusedWith(t, err, identity.CodeNoteAudience)
	// A note from someone else: the stranger's note about root's account.
	forged := issueNote(t, stranger, identity.NoteOptions{Aud: session.DID(), Sub: root.DID(), Cmd: identity.CmdTop})
	_, err = gate(t, signIn(t, underNote{session, forged}, root.DID(), testSpace, "app.todo.item", `{}`), testSpace)
	refusedWith(t, err, identity.CodeNoteSubject)
	// Signed under the stranger's own note, the root is the stranger, and
	// root's key is not theirs to write first (02 §4.1).
	own := issueNote(t, stranger, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdTop})
	_, err = gate(t, signIn(t, underNote{session, own}, root.DID(), testSpace, "app.todo.item", `{}`), testSpace)
	refusedWith(t, err, CodeKeyOwner)
	// A proof that is not a note.
	bad := resign(t, session, v, func(o *canonical.Object) { o.Set("proof", canonical.NewObject("type", "x")) })
	_, err = gate(t, bad, testSpace)
	refusedWith(t, err, identity.CodeNoteShape)
	// Every note code is among record's.
	for _, code := range identity.Codes() {
		found := false
		for _, c := range Codes() {
			found = found || c == code
		}
		if !found {
			t.Errorf("%s is not in record.Codes", code)
		}
	}
}

// Loose versions (02 §3.5 check 5): the note must be valid at createdAt.
func TestLooseUnderNote(t *testing.T) {
	root, session := mustKey(t), mustKey(t)
	created := time.Date(2026, 10, 25, 18, 15, 44, 0, time.UTC)
	sign := func(n *identity.Note) *Version {
		key, _ := FreshKey(session.DID())
		o := obj(t, `{"collection":"sys.invitation","createdAt":"2026-10-25T18:15:44.884Z","seq":0,"body":{"x":1}}`)
		o.Set("key", key)
		v, err := Sign(o, underNote{session, n})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	c := &LooseChecker{Now: func() time.Time { return created }, Notes: &identity.Checker{}}
	live := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdTop, Nbf: created.Unix() - 60, Exp: created.Unix() + 60})
	if acct, err := c.Check(sign(live), "sys.invitation"); err != nil || acct != root.DID() {
		t.Fatalf("account %s, %v", acct, err)
	}
	expired := issueNote(t, root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdTop, Exp: created.Unix()})
	_, err := c.Check(sign(expired), "sys.invitation")
	refusedWith(t, err, identity.CodeNoteTime)
	if _, ok := err.(*Refusal); !ok {
		t.Fatalf("a %T", err)
	}
}
