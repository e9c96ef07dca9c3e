package space_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// Invite text reads back to what was written; a key where the space's
// visibility does not call for one, a member the kind does not name, the
// wrong prefix, bad base64url or a v other than 1 are refused, naming what
// is wrong.
func TestInviteText(t *testing.T) {
	a := newActor(t, "ada")
	k := seal.NewKey()
	mk := func(private bool) *space.Genesis {
		o := space.GenesisOptions{Name: "s", Founders: []string{a.did}, CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: "n"}
		if private {
			o.Private, o.EncryptionKeyID = true, k.ID()
		}
		g, err := space.NewGenesis(o)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	priv, pub := mk(true), mk(false)
	text := func(o *canonical.Object) string {
		s, err := space.EncodeInviteText("kind:", o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := canonical.NewObject("v", float64(1), "genesis", priv.Object(), "sk", seal.InviteKey{Key: k}.Object(), "extra", "x")
	o, g, gk, err := space.DecodeInviteText("  "+text(good)+"\n", "kind:", "sk", "extra")
	if err != nil || g.ID != priv.ID || !gk.Equal(k) {
		t.Fatalf("a private space's invite: %v", err)
	}
	if x, _ := o.Get("extra"); x != "x" {
		t.Fatalf("the kind's own member: %v", x)
	}
	if _, g, gk, err := space.DecodeInviteText(text(canonical.NewObject("v", float64(1), "genesis", pub.Object())), "kind:", "sk"); err != nil || g.ID != pub.ID || gk != nil {
		t.Fatalf("a public space's invite: %v", err)
	}
	for name, c := range map[string]struct{ text, want string }{
		"prefix":          {strings.Replace(text(good), "kind:", "other:", 1), "it starts kind:"},
		"base64url":       {"kind:!!", "base64url"},
		"not object":      {"kind:" + base64.RawURLEncoding.EncodeToString([]byte("[]")), "an object"},
		"member":          {text(good), "no member extra"},
		"v":               {text(canonical.NewObject("v", float64(2), "genesis", pub.Object())), "v is 1"},
		"genesis":         {text(canonical.NewObject("v", float64(1), "genesis", "g")), "genesis:"},
		"public, key":     {text(canonical.NewObject("v", float64(1), "genesis", pub.Object(), "sk", seal.InviteKey{Key: k}.Object())), "sk:"},
		"private, no key": {text(canonical.NewObject("v", float64(1), "genesis", priv.Object())), "sk:"},
	} {
		others := []string{"extra"}
		if name == "member" {
			others = nil
		}
		_, _, _, err := space.DecodeInviteText(c.text, "kind:", "sk", others...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}
