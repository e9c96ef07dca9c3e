package identity

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
)

// FuzzNote: any bytes either decode as a note or are refused with a
// *NoteError; a decoded note survives every check without panicking, and
// re-decodes from its canonical form to the same note.
func FuzzNote(f *testing.F) {
	spec, err := os.ReadFile("testdata/note_06_2_5.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(spec)
	root, _ := GenerateKey()
	session, _ := GenerateKey()
	for _, opts := range []NoteOptions{
		{Aud: session.DID(), Cmd: CmdTop, Exp: 2000000000, Nbf: 1},
		{Aud: session.DID(), Cmd: CmdRecord, Sub: SpaceSubject("bs"), Pol: []any{[]any{"or", []any{[]any{"==", ".space", "a"}, []any{"like", ".collection", "app.*"}}}}},
		{Aud: session.DID(), Cmd: CmdRecordRead, Meta: canonical.NewObject("k", []any{1.5, nil})},
	} {
		n, err := IssueNote(root, opts)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := canonical.Marshal(n.Object())
		f.Add(b)
	}
	f.Add([]byte(`{"type":"minca/ucan/dlg@1","payload":{},"sig":""}`))
	f.Add([]byte(`{"type":"minca/ucan/dlg@1","payload":{"iss":"","aud":"","sub":"","cmd":"/","pol":[["not",["and",[]]]],"nonce":"","exp":1e300},"sig":""}`))
	at := time.Unix(1790022901, 0)
	checker := &Checker{}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ParseNote(data)
		if err != nil {
			var ne *NoteError
			if !errors.As(err, &ne) || ne.Code == "" {
				t.Fatalf("refused without a note code: %v", err)
			}
			return
		}
		_ = n.CheckSignature(nil)
		_ = n.CheckTime(at)
		_ = n.Grants(&Invocation{Cmd: CmdRecordWrite, Space: "bs", Collection: "app.x", HasBody: true, Body: canonical.NewObject("a", []any{1.0})})
		_, _ = checker.CheckNote(n.Object(), n.Aud, &at, nil)
		b, err := canonical.Marshal(n.Object())
		if err != nil {
			t.Fatalf("a decoded note does not marshal: %v", err)
		}
		again, err := ParseNote(b)
		if err != nil {
			t.Fatalf("its canonical form does not decode: %v", err)
		}
		if again.Iss != n.Iss || again.Cmd != n.Cmd || again.Sub != n.Sub || again.Exp != n.Exp || again.HasNbf != n.HasNbf {
			t.Fatal("its canonical form decodes to another note")
		}
		m1, _ := n.SignedBytes()
		m2, _ := again.SignedBytes()
		if string(m1) != string(m2) {
			t.Fatal("signed bytes change through the canonical form")
		}
	})
}

// FuzzPolicy: any policy and arguments either parse or are refused with
// note/policy; evaluation never panics, and a policy means the same after
// a trip through its canonical form, with the arguments in any order.
func FuzzPolicy(f *testing.F) {
	for _, c := range policyCases {
		f.Add([]byte(c.pol), []byte(testArgs))
	}
	f.Add([]byte(`[["all", ".", ["any", ".", ["==", ".", 1]]]]`), []byte(`[[1],[2,1],{"a":[1]}]`))
	f.Add([]byte(`[["not", ["and", []]]]`), []byte(`{}`))
	f.Add([]byte(`[["or", [["==", ".space", "a"], ["==", ".space", "b"]]]]`), []byte(`{"space":"b"}`))
	f.Fuzz(func(t *testing.T, polText, argsText []byte) {
		pv, err := canonical.Parse(polText)
		if err != nil {
			return
		}
		args, err := canonical.Parse(argsText)
		if err != nil {
			return
		}
		p, err := ParsePolicy(pv)
		if err != nil {
			var ne *NoteError
			if !errors.As(err, &ne) || ne.Code != CodeNotePolicy {
				t.Fatalf("refused without note/policy: %v", err)
			}
			return
		}
		got := p.Holds(args)
		canonPol, _ := canonical.Marshal(pv)
		canonArgs, _ := canonical.Marshal(args)
		pv2, _ := canonical.Parse(canonPol)
		args2, _ := canonical.Parse(canonArgs)
		p2, err := ParsePolicy(pv2)
		if err != nil {
			t.Fatalf("its canonical form does not parse: %v", err)
		}
		if p2.Holds(args2) != got {
			t.Fatalf("holds %v, but %v after canonical form", got, !got)
		}
	})
}

// FuzzSelector: any text parses or is refused with an error, and a
// selector that parses resolves in any value without panicking.
func FuzzSelector(f *testing.F) {
	for _, s := range []string{".", ".a", ".a[0]", `.["x"]?`, ".a[-1:]", ".a[]", ".a??.b", "..", `.["\u00e9"]`, ".a[1:2]"} {
		f.Add(s)
	}
	value, _ := canonical.Parse([]byte(ucanArgs))
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		if sel.String() != s {
			t.Fatalf("String() = %q", sel.String())
		}
		sel.Select(value)
		sel.Select(nil)
		sel.Select([]any{1.0, "x", canonical.NewObject("a", []any{})})
	})
}
