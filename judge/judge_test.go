package judge_test

import (
	"errors"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// sessionVersion signs a first version in space with a session key acting
// under a note from account, at a fresh key of the account's.
func sessionVersion(t *testing.T, account *identity.PrivateKey, space, cmd string) *record.Version {
	t.Helper()
	session, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	note, err := identity.IssueNote(account, identity.NoteOptions{Aud: session.DID(), Sub: account.DID(), Cmd: cmd, Nonce: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	signer, err := identity.NewSessionSigner(session, note)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := record.FreshKey(account.DID())
	o := canonical.NewObject("collection", "app.note", "createdAt", "2026-09-26T12:00:00.000Z", "key", key,
		"seq", float64(0), "space", space, "log", canonical.NewObject("n", float64(0)), "body", "hi")
	v, err := record.Sign(o, signer)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The capability gate (02 §9.3): with no note checker a version with a proof
// is refused as unchecked; with identity's checker its root is the note's
// issuer, and the key it is written at must be the root's (§4.1).
func TestJudgeCapabilityGate(t *testing.T) {
	account, _ := identity.GenerateKey()
	space := canonical.IDOf([]byte("space")).String()
	v := sessionVersion(t, account, space, "/record")
	if _, err := (&judge.Judge{}).Check(v); err == nil || err.(*record.Refusal).Code != record.CodeNoProof {
		t.Fatalf("no checker: %v", err)
	}
	j := &judge.Judge{Notes: &identity.Checker{}}
	c, err := j.Check(v)
	if err != nil || c.Root != account.DID() {
		t.Fatalf("root %q, %v", c.Root, err)
	}
	d, err := j.Decide(nothingHeld{}, v, c)
	if err != nil || d.Verdict != engine.Stands {
		t.Fatalf("decide: %+v %v", d, err)
	}
	// The session key is not the root: a key of its own is not the root's.
	if d, _ := j.Decide(nothingHeld{}, v, engine.Checked{Root: v.Author}); d.Verdict != engine.Refused || d.Refusal.Code != record.CodeKeyOwner {
		t.Fatalf("owner check: %+v", d)
	}
	// A note that does not grant writing refuses the version.
	ro := sessionVersion(t, account, space, "/record/read")
	if _, err := j.Check(ro); err == nil {
		t.Fatal("a read-only note let a version in")
	}
}

type nothingHeld struct{}

func (nothingHeld) Held(canonical.ID) (*record.Version, bool, error) { return nil, false, nil }
func (nothingHeld) Standing(canonical.ID) (engine.Verdict, bool, error) {
	return engine.Refused, false, nil
}

// The judge's own refusals (02 §4.5, §3.5): an access-history version
// without retain, and a loose version, are refused before any signature
// is checked.
func TestJudgeOwnRefusals(t *testing.T) {
	key, _ := identity.GenerateKey()
	space := canonical.IDOf([]byte("space")).String()
	sign := func(o *canonical.Object) *record.Version {
		t.Helper()
		v, err := record.Sign(o, key)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	role := sign(canonical.NewObject("collection", "sys.role", "createdAt", "2026-09-26T12:00:00.000Z", "key", "role:x",
		"seq", float64(0), "space", space, "log", canonical.NewObject("n", float64(0)), "body", "r"))
	loose := sign(canonical.NewObject("collection", "app.note", "createdAt", "2026-09-26T12:00:00.000Z", "key", "k",
		"seq", float64(0), "body", "x"))
	for _, c := range []struct {
		v    *record.Version
		code string
	}{{role, judge.CodeRetainRequired}, {loose, judge.CodeNoSpace}} {
		_, err := (&judge.Judge{}).Check(c.v)
		var r *record.Refusal
		if !errors.As(err, &r) || r.Code != c.code {
			t.Errorf("want %s, got %v", c.code, err)
		}
	}
}
