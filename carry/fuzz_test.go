package carry

import (
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// What a carrier reads of a carry space, and what a node reads of the
// registry, comes from storage anyone may have written: bad bodies never
// panic, and what reads back writes the same.
func FuzzCarryFormats(f *testing.F) {
	f.Add("pass:bfbmylqsvvklo7ywpupn22alrnqq5zvtddwlw6mgvhjxqnbrxmroa", `{"space":{"account":true,"createdAt":"2026-01-01T00:00:00.000Z","founders":["did:key:zDnaeim1rJoP2mRETJaC6rufJpPHry6GBUtuV6JUeXgZeLF7A"],"name":"account","nonce":"minca/account-registry/v1","v":1,"visibility":"public"},"v":1}`)
	f.Add("pass:x", `{"v":1,"space":{},"read":"AAAA","readKey":"did:key:z"}`)
	f.Add("carrier:bx", `{"did":"did:key:zDnaesvtHvEM7Ef9PwrYQY6EEg31hwgg7CKZHdV7xPP2GArdE","name":"n","since":"s","gen":3}`)
	f.Add("carrier:bx", `{"did":"did:key:zDnaesvtHvEM7Ef9PwrYQY6EEg31hwgg7CKZHdV7xPP2GArdE","gen":-1}`)
	f.Add("wake:a", `{"v":1,"automation":"automation:a","name":"n","collection":"app.chat","others":true,"spaces":["b"],"open":"https://x"}`)
	f.Add("automation:a", `{"name":"n","when":{"query":{"collection":"app.chat"},"others":false},"spaces":["b"],"open":"/"}`)
	f.Add("", `[]`)
	f.Fuzz(func(t *testing.T, key, body string) {
		v, err := canonical.Parse([]byte(body))
		if err != nil {
			return
		}
		if p, err := ReadPass(key, v); err == nil {
			if again, err := ReadPass(key, p.Value()); err != nil || again.Genesis.ID != p.Genesis.ID {
				t.Fatalf("a pass read does not read back: %v", err)
			}
		}
		if w, err := ReadWake(v); err == nil {
			if again, err := ReadWake(w.Value()); err != nil || again.Collection != w.Collection || again.Others != w.Others {
				t.Fatalf("a wake read does not read back: %v", err)
			}
		}
		if w, err := ReadAutomation(key, v); err == nil && w.Collection == "" {
			t.Fatal("an automation read with no collection")
		}
		if c, ok := ReadCarrier(key, v); ok {
			if c.Gen < 0 || c.Space == "" {
				t.Fatalf("a carrier record read as %+v", c)
			}
			if again, ok := ReadCarrier(key, c.Value()); !ok || again.DID != c.DID || again.Gen != c.Gen {
				t.Fatal("a carrier record read does not read back")
			}
		}
	})
}

// A view-only invite is handed over as text: bad text never panics, and
// what parses holds a key exactly when its space is private.
func FuzzParseViewInvite(f *testing.F) {
	f.Add("minca-view:eyJ2IjoxfQ")
	f.Add("minca-view:")
	f.Add("nothing")
	f.Fuzz(func(t *testing.T, text string) {
		g, k, err := ParseViewInvite(text)
		if err != nil {
			if r, ok := err.(*record.Refusal); !ok || r.Code != CodeBadInvite {
				t.Fatalf("a bad invite gave %T %v, not a *record.Refusal %s", err, err, CodeBadInvite)
			}
			return
		}
		if (k != nil) != g.Private() {
			t.Fatal("a view-only invite's key does not follow its space's visibility")
		}
	})
}
