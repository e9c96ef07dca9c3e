package node_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
)

// A program's directory: SessionKey makes the key once and reads it after;
// KeepGrant keeps a note only for that key and only one that writes
// records, and HeldNote reads it back.
func TestSessionKeyAndKeepGrant(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agent")
	k, err := node.SessionKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := node.SessionKey(dir)
	if err != nil || again.DID() != k.DID() {
		t.Fatalf("a second key %v %v", again, err)
	}
	if n, err := node.HeldNote(dir); n != nil || err != nil {
		t.Fatalf("a note before any: %v %v", n, err)
	}
	acc, _ := identity.GenerateKey()
	other, _ := identity.GenerateKey()
	for _, c := range []struct {
		name string
		o    identity.NoteOptions
	}{
		{"another key's", identity.NoteOptions{Aud: other.DID(), Cmd: identity.CmdRecord}},
		{"a reading one", identity.NoteOptions{Aud: k.DID(), Cmd: "/record/read"}},
	} {
		n, err := identity.IssueNote(acc, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if err := node.KeepGrant(dir, n, []byte(`{}`)); err == nil {
			t.Fatalf("%s note was kept", c.name)
		}
		if _, err := os.Stat(filepath.Join(dir, node.GrantName)); err == nil {
			t.Fatalf("%s note's grant was kept", c.name)
		}
	}
	n, err := identity.IssueNote(acc, identity.NoteOptions{Aud: k.DID(), Cmd: identity.CmdRecord})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.KeepGrant(dir, n, []byte(`{"v":2}`)); err != nil {
		t.Fatal(err)
	}
	held, err := node.HeldNote(dir)
	if err != nil || held == nil || held.Aud != k.DID() || held.Iss != acc.DID() {
		t.Fatalf("%+v %v", held, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, node.GrantName)); string(b) != `{"v":2}` {
		t.Fatalf("grant %s", b)
	}
}
