package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

const noteSpace = "bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a"

func keygen(t *testing.T, dir, name string) (file, did string) {
	t.Helper()
	file = filepath.Join(dir, name)
	out, errs, code := minca(t, "", "keygen", "--out", file)
	if code != 0 {
		t.Fatalf("keygen: %d %s", code, errs)
	}
	return file, strings.TrimSpace(out)
}

func TestNoteIssueAndCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rootFile, rootDID := keygen(t, dir, "root.pem")
	_, sessionDID := keygen(t, dir, "session.pem")
	out, errs, code := minca(t, "", "note", "issue", "--key", rootFile, "--aud", sessionDID, "--cmd", "/record",
		"--sub", "space:"+noteSpace, "--pol", `[["like", ".collection", "app.*"]]`, "--days", "30")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("note issue: %d %q %s", code, out, errs)
	}
	n, err := identity.ParseNote([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if n.Iss != rootDID || n.Aud != sessionDID || n.Cmd != "/record" || n.Sub != "space:"+noteSpace || n.Exp-n.Nbf != 30*86400 {
		t.Fatalf("issued %+v", n)
	}
	noteFile := filepath.Join(dir, "note.json")
	os.WriteFile(noteFile, []byte(out), 0o644)

	check := func(stdin string, args ...string) (map[string]any, int) {
		t.Helper()
		out, errs, code := minca(t, stdin, append([]string{"note", "check"}, args...)...)
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("note check %v: %d %q %s", args, code, out, errs)
		}
		return res, code
	}
	res, code := check("", noteFile)
	if code != 0 || res["valid"] != true || res["iss"] != rootDID || res["exp"] == nil {
		t.Fatalf("check: %d %v", code, res)
	}
	if res, code = check(out, "--at", "now", "--aud", sessionDID, "--cmd", "/record/write", "--space", noteSpace, "--collection", "app.todo"); code != 0 || res["grants"] != "/record/write" {
		t.Fatalf("check now: %d %v", code, res)
	}
	for _, c := range []struct {
		args   []string
		reason string
	}{
		{[]string{"--at", "1970-01-02T00:00:00Z"}, "note/time"},
		{[]string{"--at", "99999999999"}, "note/time"},
		{[]string{"--aud", rootDID}, "note/audience"},
		{[]string{"--cmd", "/collection/define", "--space", noteSpace}, "note/command"},
		{[]string{"--cmd", "/record/write", "--space", "bother", "--collection", "app.todo"}, "note/subject"},
		{[]string{"--cmd", "/record/write", "--space", noteSpace, "--collection", "sys.role"}, "note/policy"},
	} {
		res, code := check(out, c.args...)
		if code != 1 || res["valid"] != false || res["reason"] != c.reason {
			t.Errorf("check %v: %d %v, want %s", c.args, code, res, c.reason)
		}
	}
	// 06 §2.5's example decodes, and fails only on its cut-short sig.
	spec, err := os.ReadFile("../../identity/testdata/note_06_2_5.json")
	if err != nil {
		t.Fatal(err)
	}
	if res, code := check(string(spec)); code != 1 || res["reason"] != "note/signature" {
		t.Fatalf("06 §2.5: %d %v", code, res)
	}
	if res, code := check(strings.Replace(out, `"cmd"`, `"extra":1,"cmd"`, 1)); code != 1 || res["reason"] != "note/shape" {
		t.Fatalf("unknown member: %d %v", code, res)
	}
	// Usage errors: exit 2.
	for _, args := range [][]string{
		{"note", "issue", "--key", rootFile, "--aud", sessionDID, "--cmd", "/record", "--pol", `[["==", "space", 1]]`},
		{"note", "issue", "--key", rootFile, "--aud", sessionDID, "--cmd", "record"},
		{"note", "issue", "--key", rootFile, "--aud", "did:web:x", "--cmd", "/"},
		{"note", "issue", "--key", rootFile, "--aud", sessionDID},
		{"note", "check", "--at", "yesterday", noteFile},
		{"note", "check", "--space", noteSpace, noteFile},
		{"note", "nope"},
	} {
		if _, _, code := minca(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestSignUnderNote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rootFile, rootDID := keygen(t, dir, "root.pem")
	sessionFile, sessionDID := keygen(t, dir, "session.pem")
	otherFile, _ := keygen(t, dir, "other.pem")
	note, _, code := minca(t, "", "note", "issue", "--key", rootFile, "--aud", sessionDID, "--cmd", "/record", "--sub", "space:"+noteSpace, "--days", "1")
	if code != 0 {
		t.Fatal("note issue")
	}
	noteFile := filepath.Join(dir, "note.json")
	os.WriteFile(noteFile, []byte(note), 0o644)
	fresh, _, _ := minca(t, "", "key", "fresh", rootDID)
	unsigned := func(space string) string {
		return `{"collection":"app.todo.item","createdAt":"2026-09-26T12:00:00.000Z","space":"` + space + `","key":"` + strings.TrimSpace(fresh) + `","seq":0,"log":{"n":0},"body":{"text":"hi"}}`
	}
	signed, errs, code := minca(t, unsigned(noteSpace), "sign", "--key", sessionFile, "--note", noteFile)
	if code != 0 {
		t.Fatalf("sign --note: %d %s", code, errs)
	}
	v, err := record.Decode([]byte(signed))
	if err != nil || v.Author != sessionDID || v.Proof == nil {
		t.Fatalf("signed %v, %v", v, err)
	}
	// verify runs the capability gate: the root is the account, whose key
	// it is (02 §4.1).
	if out, _, code := minca(t, signed, "verify"); code != 0 || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("verify: %d %q", code, out)
	}
	// Out of the note's reach: signing refuses.
	if _, errs, code := minca(t, unsigned("bother"), "sign", "--key", sessionFile, "--note", noteFile); code != 2 || !strings.Contains(errs, "note/subject") {
		t.Fatalf("another space: %d %s", code, errs)
	}
	// A note made out to another key.
	if _, errs, code := minca(t, unsigned(noteSpace), "sign", "--key", otherFile, "--note", noteFile); code != 2 || !strings.Contains(errs, "made out to") {
		t.Fatalf("another key: %d %s", code, errs)
	}
	// A version carrying the note out of its reach, made by hand: verify
	// refuses it with the note's reason.
	session, _ := identity.ReadKeyFile(sessionFile)
	n, _ := identity.ParseNote([]byte(note))
	o, _ := canonical.Parse([]byte(unsigned("bother2")))
	out, err := record.Sign(o.(*canonical.Object), handSigner{session, n})
	if err != nil {
		t.Fatal(err)
	}
	line, _ := canonical.Marshal(out.Object())
	if out, _, code := minca(t, string(line), "verify"); code != 1 || !strings.Contains(out, `"reason":"note/subject"`) {
		t.Fatalf("verify out of reach: %d %q", code, out)
	}
}

// handSigner attaches a note without checking it reaches what it signs.
type handSigner struct {
	*identity.PrivateKey
	note *identity.Note
}

func (h handSigner) Proof() *canonical.Object { return h.note.Object() }
