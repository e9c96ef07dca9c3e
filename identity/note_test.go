package identity

import (
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
)

func newKey(t testing.TB) *PrivateKey {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func issue(t testing.TB, iss Signer, opts NoteOptions) *Note {
	t.Helper()
	n, err := IssueNote(iss, opts)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantCode fails unless err is a *NoteError with code.
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	var ne *NoteError
	if !errors.As(err, &ne) || ne.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	if ne.ReasonCode() != code || !strings.HasPrefix(ne.Error(), code+": ") {
		t.Fatalf("ReasonCode %q, Error %q", ne.ReasonCode(), ne.Error())
	}
}

// 06 §2.5: the example grant's note decodes; its signature is cut short
// there, so it decodes as a string and fails only when checked.
func TestSpecNoteDecodes(t *testing.T) {
	b, err := os.ReadFile("testdata/note_06_2_5.json")
	if err != nil {
		t.Fatal(err)
	}
	n, err := ParseNote(b)
	if err != nil {
		t.Fatal(err)
	}
	if n.Iss != "did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E" ||
		n.Aud != "did:key:zDnaeyrPwbZxpDVLsnvAvAEGYazWB2ZrM7QL4Qb1JPzfiYpKy" ||
		n.Cmd != "/" || n.Sub != "space:blm7z6…" || n.Nonce != "pr0q7Vm5c2T8xkWa" ||
		!n.HasExp || n.Exp != 1792614901 || !n.HasNbf || n.Nbf != 1790022901 ||
		len(n.Pol) != 0 || n.Meta != nil || n.Sig != "…" {
		t.Fatalf("decoded %+v", n)
	}
	if p, err := n.Policy(); err != nil || p.Len() != 0 {
		t.Fatalf("policy %v, %v", p, err)
	}
	wantCode(t, n.CheckSignature(nil), CodeNoteSignature)
	// What it would grant, signature aside: anything in space blm7z6…, only.
	if err := n.Grants(&Invocation{Cmd: CmdRecordWrite, Space: "blm7z6…", Collection: "app.todo.item"}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, n.Grants(&Invocation{Cmd: CmdRecordWrite, Space: "other", Collection: "app.todo.item"}), CodeNoteSubject)
	// The signed bytes are the canonical {payload, type}.
	msg, err := n.SignedBytes()
	if err != nil || !strings.HasPrefix(string(msg), `{"payload":{"aud":"did:key:zDnaey`) || !strings.HasSuffix(string(msg), `},"type":"minca/ucan/dlg@1"}`) || strings.Contains(string(msg), "sig") {
		t.Fatalf("signed bytes %s, %v", msg, err)
	}
}

func TestIssueDecodeVerify(t *testing.T) {
	root, session := newKey(t), newKey(t)
	n := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord, Exp: 2000000000, Nbf: 1700000000,
		Pol: []any{[]any{"==", ".collection", "app.todo.item"}}, Meta: canonical.NewObject("app", "todo")})
	if n.Iss != root.DID() || n.Sub != root.DID() || n.Aud != session.DID() || len(n.Nonce) != 16 {
		t.Fatalf("issued %+v", n)
	}
	if err := n.CheckSignature(nil); err != nil {
		t.Fatal(err)
	}
	text, err := canonical.Marshal(n.Object())
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseNote(text)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.CheckSignature(&Resolver{}); err != nil {
		t.Fatal(err)
	}
	if back.Meta == nil || back.Exp != 2000000000 || back.Nbf != 1700000000 {
		t.Fatalf("decoded %+v", back)
	}
	// Two notes with the same terms differ by their nonce.
	other := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord})
	if other.Nonce == n.Nonce {
		t.Fatal("the same nonce twice")
	}
	// Changing any signed member breaks the signature.
	for _, edit := range []func(p *canonical.Object){
		func(p *canonical.Object) { p.Set("cmd", "/") },
		func(p *canonical.Object) { p.Set("aud", root.DID()) },
		func(p *canonical.Object) { p.Set("exp", float64(2000000001)) },
		func(p *canonical.Object) { p.Set("pol", []any{}) },
		func(p *canonical.Object) { p.Delete("meta") },
	} {
		tampered := editNote(t, n, edit)
		wantCode(t, tampered.CheckSignature(nil), CodeNoteSignature)
	}
	// Signed by another key than iss.
	forged := editNote(t, n, func(p *canonical.Object) {})
	msg, _ := forged.SignedBytes()
	sig, _ := session.Sign(msg)
	forged = withSig(t, forged, base64.RawURLEncoding.EncodeToString(sig))
	wantCode(t, forged.CheckSignature(nil), CodeNoteSignature)
	// sig that does not decode, or not to 64 bytes.
	good := n.Sig
	for _, s := range []string{"", "…", good[:len(good)-1], good + "A", good + "==", strings.Replace(good, good[:1], "+", 1), base64.RawURLEncoding.EncodeToString(make([]byte, 63))} {
		wantCode(t, withSig(t, n, s).CheckSignature(nil), CodeNoteSignature)
	}
	// iss that is not a P-256 did:key.
	notKey := editNote(t, n, func(p *canonical.Object) { p.Set("iss", "did:web:example.com") })
	wantCode(t, notKey.CheckSignature(nil), CodeNoteIssuer)
}

// editNote decodes a copy of n's object with its payload changed.
func editNote(t testing.TB, n *Note, edit func(p *canonical.Object)) *Note {
	t.Helper()
	text, _ := canonical.Marshal(n.Object())
	v, _ := canonical.Parse(text)
	o := v.(*canonical.Object)
	p, _ := o.Get("payload")
	edit(p.(*canonical.Object))
	out, err := DecodeNote(o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func withSig(t testing.TB, n *Note, sig string) *Note {
	t.Helper()
	o := n.Object().Clone()
	o.Set("sig", sig)
	out, err := DecodeNote(o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNoteShapeRefusals(t *testing.T) {
	root, session := newKey(t), newKey(t)
	n := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdTop, Exp: 2000000000})
	text, _ := canonical.Marshal(n.Object())
	base := string(text)
	payload := func(from, to string) string {
		if !strings.Contains(base, from) {
			t.Fatalf("%s not in %s", from, base)
		}
		return strings.Replace(base, from, to, 1)
	}
	cases := []struct {
		name, text, code string
	}{
		{"not an object", `[]`, CodeNoteShape},
		{"not JSON", `{"type":`, CodeNoteShape},
		{"unknown top-level member", strings.Replace(base, `{"payload"`, `{"extra":1,"payload"`, 1), CodeNoteShape},
		{"unknown payload member", payload(`"cmd":"/"`, `"cmd":"/","prf":[]`), CodeNoteShape},
		{"no type", strings.Replace(base, `,"type":"minca/ucan/dlg@1"`, ``, 1), CodeNoteShape},
		{"another type", strings.Replace(base, `dlg@1`, `dlg@1.0.0-rc.1`, 1), CodeNoteShape},
		{"no sig", strings.Replace(base, `"sig":"`+n.Sig+`",`, ``, 1), CodeNoteShape},
		{"sig not a string", strings.Replace(base, `"sig":"`+n.Sig+`"`, `"sig":1`, 1), CodeNoteShape},
		{"payload not an object", `{"payload":[],"sig":"x","type":"minca/ucan/dlg@1"}`, CodeNoteShape},
		{"cmd not a string", payload(`"cmd":"/"`, `"cmd":1`), CodeNoteShape},
		{"cmd null", payload(`"cmd":"/"`, `"cmd":null`), CodeNoteShape},
		{"cmd without a slash", payload(`"cmd":"/"`, `"cmd":"record"`), CodeNoteCommand},
		{"cmd trailing slash", payload(`"cmd":"/"`, `"cmd":"/record/"`), CodeNoteCommand},
		{"cmd uppercase", payload(`"cmd":"/"`, `"cmd":"/Record"`), CodeNoteCommand},
		{"no cmd", payload(`"cmd":"/",`, ``), CodeNoteShape},
		{"no nonce", payload(`"nonce":"`+n.Nonce+`",`, ``), CodeNoteShape},
		{"nonce not a string", payload(`"nonce":"`+n.Nonce+`"`, `"nonce":7`), CodeNoteShape},
		{"no sub", payload(`,"sub":"`+root.DID()+`"`, ``), CodeNoteShape},
		{"sub not a string", payload(`"sub":"`+root.DID()+`"`, `"sub":false`), CodeNoteShape},
		{"aud not a string", payload(`"aud":"`+session.DID()+`"`, `"aud":["x"]`), CodeNoteShape},
		{"iss missing", payload(`"iss":"`+root.DID()+`",`, ``), CodeNoteShape},
		{"pol not a list", payload(`"pol":[]`, `"pol":{}`), CodeNoteShape},
		{"pol missing", payload(`"pol":[],`, ``), CodeNoteShape},
		{"exp not an integer", payload(`"exp":2000000000`, `"exp":2000000000.5`), CodeNoteShape},
		{"exp a string", payload(`"exp":2000000000`, `"exp":"2000000000"`), CodeNoteShape},
		{"exp null", payload(`"exp":2000000000`, `"exp":null`), CodeNoteShape},
		{"exp past 2^53", payload(`"exp":2000000000`, `"exp":9007199254740992`), CodeNoteShape},
		{"nbf negative past 2^53", payload(`"exp":2000000000`, `"exp":2000000000,"nbf":-9007199254740992`), CodeNoteShape},
		{"meta not an object", payload(`"nonce"`, `"meta":[],"nonce"`), CodeNoteShape},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseNote([]byte(c.text))
			wantCode(t, err, c.code)
		})
	}
	// At the edges of the integers and with a malformed policy, a note
	// still decodes: the policy is judged when it is asked to grant.
	for _, ok := range []string{
		payload(`"exp":2000000000`, `"exp":9007199254740991,"nbf":-9007199254740991`),
		payload(`"pol":[]`, `"pol":[["nope"]]`),
		payload(`"nonce"`, `"meta":{"anything":[1,{"x":null}]},"nonce"`),
		payload(`"sub":"`+root.DID()+`"`, `"sub":"did:key:zSomeoneElse"`),
	} {
		if _, err := ParseNote([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	bad := payload(`"pol":[]`, `"pol":[["nope"]]`)
	nb, _ := ParseNote([]byte(bad))
	if _, err := nb.Policy(); err == nil {
		t.Fatal("a malformed policy parsed")
	}
	wantCode(t, nb.Grants(&Invocation{Cmd: CmdRecordWrite, Space: "s", Collection: "c"}), CodeNotePolicy)
}

func TestNoteTime(t *testing.T) {
	root, session := newKey(t), newKey(t)
	n := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdTop, Nbf: 1000, Exp: 2000})
	at := func(sec int64, nsec int64) time.Time { return time.Unix(sec, nsec) }
	wantCode(t, n.CheckTime(at(999, 999999999)), CodeNoteTime)
	for _, ok := range []time.Time{at(1000, 0), at(1500, 0), at(1999, 999999999)} {
		if err := n.CheckTime(ok); err != nil {
			t.Errorf("%v: %v", ok.Unix(), err)
		}
	}
	wantCode(t, n.CheckTime(at(2000, 0)), CodeNoteTime)
	wantCode(t, n.CheckTime(at(3000, 0)), CodeNoteTime)
	// No exp: no end. No nbf: from the epoch.
	open := issue(t, root, NoteOptions{Aud: session.DID(), Cmd: CmdTop})
	if err := open.CheckTime(at(1<<40, 0)); err != nil {
		t.Fatal(err)
	}
	if err := open.CheckTime(at(0, 0)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, open.CheckTime(at(-1, 0)), CodeNoteTime)
	// Issuing refuses an empty window.
	if _, err := IssueNote(root, NoteOptions{Aud: session.DID(), Cmd: CmdTop, Nbf: 2000, Exp: 2000}); err == nil {
		t.Fatal("issued exp = nbf")
	}
}

func TestIssueRefuses(t *testing.T) {
	root, session := newKey(t), newKey(t)
	for _, opts := range []NoteOptions{
		{Aud: "did:web:x", Cmd: CmdTop},
		{Aud: session.DID(), Cmd: "record"},
		{Aud: session.DID(), Cmd: CmdTop, Pol: []any{[]any{"==", "nope", 1}}},
		{Aud: session.DID(), Cmd: CmdTop, Exp: 1 << 54},
	} {
		if _, err := IssueNote(root, opts); err == nil {
			t.Errorf("issued %+v", opts)
		}
	}
}
