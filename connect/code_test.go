package connect_test

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/connect"
)

// connect-code.test.ts: "the room for a code, and the link that carries it"
// (06 §3): the spec's vector, the link's fragment, and the first-match rule.
func TestConnectCode_TheRoomForACodeAndTheLinkThatCarriesIt(t *testing.T) {
	vec, _ := specVectors(t)
	c, err := connect.CodeIn(vec.Link)
	if err != nil {
		t.Fatal(err)
	}
	if c.String() != "mc_"+vec.Secret || c.Room() != vec.Room {
		t.Fatalf("code %s room %s, want mc_%s %s", c, c.Room(), vec.Secret, vec.Room)
	}
	if got := c.Link("https://home.example/connect"); got != vec.Link {
		t.Fatalf("link %s, want %s", got, vec.Link)
	}
	const s = "eYV4XGMvhkky6OWpPfqfRQ"
	for _, text := range []string{
		"mc_" + s,
		"  https://home.example/connect#mc_" + s + "  ",
		"open https://home.example/connect#mc_" + s + ".",
		"xmc_" + s + " and mc_AAAAAAAAAAAAAAAAAAAAAA",
		"mc_" + s + "A mc_" + s,                                 // the first is followed by a base64url character
		"mc_mc_" + s,                                            // mc_ then 22 characters that run on; then the code
		"mc_" + s[:21] + "! mc_" + s,                            // too short, then the code
		"mc_" + s[:21] + "R",                                    // the last character's low bits are ignored: …RQ and …RR read alike
		"mc_" + strings.ToUpper("x") + s[1:] + "\n" + "mc_" + s, // the first match wins, whatever it is
	} {
		got, err := connect.CodeIn(text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		want := s
		if strings.HasPrefix(text, "mc_X") {
			want = "X" + s[1:]
		}
		if w, _ := connect.CodeIn("mc_" + want); got != w {
			t.Errorf("%q: read %s, want the code of mc_%s", text, got, want)
		}
	}
	if a, _ := connect.CodeIn("mc_" + s[:21] + "R"); a.String() != "mc_"+s {
		t.Fatalf("%s", a)
	}
	for _, text := range []string{"", "mc_", "mc_" + s[:21], "mc_" + s + "x", "mc_" + s + "-", "mc_" + s[:10] + "+" + s[11:], "MC_" + s} {
		_, err := connect.CodeIn(text)
		wantCode(t, err, connect.CodeCodeNone)
	}
	// A new code each time, from a CSPRNG.
	a, err := connect.NewCode()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := connect.NewCode()
	if a == b || a.Room() == b.Room() || len(a.String()) != 25 {
		t.Fatalf("%s %s", a, b)
	}
	if back, err := connect.CodeIn(a.Link("https://home.example/connect")); err != nil || back != a {
		t.Fatalf("%s: %v", back, err)
	}
}
